"""The notebook view of a trace (tracedoc.View). Pure Python, without the engine: the browser test
(tests/view_browser_test.py) loads this file alone to check the iframe a notebook shows."""

from __future__ import annotations

import html
import os


class View:
    """The ``tracedoc view`` page of a trace: shown inline by Jupyter (an iframe holding the
    self-contained page), or written with ``save``."""

    def __init__(self, html: str, height: int = 720) -> None:
        self.html = html
        self.height = height

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the page, which needs no network and no other file, to ``path``, as ``tracedoc
        view -o`` writes it: whole or not at all (a full disk leaves no partial file; TraceError
        says why), a device or FIFO in place, a directory refused."""
        from tracedoc._tracedoc import write_output  # the engine, imported when used

        write_output(os.fspath(path), self.html.encode("utf-8"))

    def _repr_html_(self) -> str:
        return (
            f'<iframe srcdoc="{html.escape(self.html, quote=True)}" '
            f'style="width: 100%; height: {self.height}px; border: 0" '
            'sandbox="allow-scripts allow-downloads"></iframe>'
        )
