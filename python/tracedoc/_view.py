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
        """Writes the page, which needs no network and no other file, to ``path``."""
        with open(path, "w", encoding="utf-8") as out:
            out.write(self.html)

    def _repr_html_(self) -> str:
        return (
            f'<iframe srcdoc="{html.escape(self.html, quote=True)}" '
            f'style="width: 100%; height: {self.height}px; border: 0" '
            'sandbox="allow-scripts allow-downloads"></iframe>'
        )
