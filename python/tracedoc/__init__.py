"""tracedoc in Python: GPU timelines (Nsight Systems exports, PyTorch profiler traces) as Arrow
tables and pandas DataFrames, the ``nsys stats`` reports, the summary and the diagnosis, computed by
the same C++ engine as the ``tracedoc`` command line.

    >>> import tracedoc
    >>> t = tracedoc.load("run.sqlite")
    >>> kernels = t.table("kernels").to_pandas()
    >>> t.report("cuda_gpu_kern_sum").head()

See docs/python.md for the whole API.
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import _tracedoc
from ._tracedoc import NoDataError, TraceError
from ._view import View

if TYPE_CHECKING:  # imported when used: `import tracedoc` stays fast
    import pandas
    import pyarrow

__all__ = [
    "Column",
    "Diagnosis",
    "NoDataError",
    "Summary",
    "Trace",
    "TraceError",
    "TraceWarning",
    "View",
    "diff",
    "load",
    "reports",
    "rules",
    "tables",
]


class TraceWarning(UserWarning):
    """What a read left to say without failing, in the command line's words: events it counted and
    skipped or kept (ends before starts, unusable timestamps), a folder's entries it did not read
    and why, Nsight Compute values read as absent. ``load`` issues one per line the CLI prints as
    ``tracedoc: warning: ...``."""


@dataclass(frozen=True)
class Column:
    """One column of a model table, as declared in the engine (model/trace.h)."""

    name: str
    type: str  #: the Arrow type: int64, int32, uint8, ..., double, dictionary<utf8>
    unit: str  #: "ns" for times, "bytes" for sizes, "" otherwise
    description: str


def tables() -> dict[str, list[Column]]:
    """Every table of the trace model and its columns, in the engine's order."""
    return {name: [Column(*c) for c in columns] for name, columns in _tracedoc.table_declarations()}


def reports() -> dict[str, str]:
    """The ``tracedoc stats`` reports: name -> display name (``tracedoc stats --help-reports``)."""
    return dict(_tracedoc.report_names())


def rules() -> dict[str, str]:
    """The ``tracedoc analyze`` (= ``nsys analyze``) rules: name -> display name."""
    return dict(_tracedoc.rule_names())


def load(
    path: str | os.PathLike[str],
    rank: int | None = None,
    max_memory: str | int | None = None,
    threads: int | None = None,
    filter_time: str | None = None,
    filter_nvtx: str | None = None,
    all_ranks: bool = False,
) -> Trace:
    """Reads a trace: an nsys SQLite export, an ``.nsys-rep`` (with ``nsys`` on PATH), a PyTorch
    profiler trace (``.json`` or ``.json.gz``), a directory of per-rank PyTorch traces, or a
    ``tracedoc capture`` file. The read runs without the GIL, on ``threads`` threads (default: the
    cores this process may use).

    rank: for PyTorch traces, keep only this rank. max_memory: stop with TraceError past this
    resident size ("8G", "512M" or bytes; default: most of the machine's memory).
    filter_time ("[START]/[END]"), filter_nvtx ("RANGE[@DOMAIN][/INDEX]") and all_ranks keep what
    ``tracedoc stats --filter-time / --filter-nvtx / --all-ranks`` keep.
    Raises TraceError with the command line's one-line message on bad input.
    """
    limit = None if max_memory is None else str(max_memory)
    core = _tracedoc.load(os.fspath(path), rank, limit, threads, filter_time or "", filter_nvtx or "", all_ranks)
    for line in core.read_warnings():
        warnings.warn(line, TraceWarning, stacklevel=2)
    return Trace(core)


def diff(
    base: Trace | str | os.PathLike[str],
    new: Trace | str | os.PathLike[str],
    alpha: float = 0.05,
    min_change: float = 5.0,
    step_marker: str | None = None,
    findings: bool = True,
    config: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """What ``tracedoc diff BASE NEW -f json`` prints: step time, per-kernel, operator and range
    changes with their significance (Mann-Whitney U, q-values), and the findings that came or went.
    ``base`` and ``new`` are traces or paths."""
    base_trace = base if isinstance(base, Trace) else load(base)
    new_trace = new if isinstance(new, Trace) else load(new)
    text = _tracedoc.diff_json(
        base_trace._core,
        new_trace._core,
        alpha,
        min_change,
        step_marker or "",
        findings,
        "" if config is None else os.fspath(config),
    )
    return json.loads(text)


def _html_table(frame: pandas.DataFrame, caption: str) -> str:
    if frame.empty:
        return ""
    return f"<h4>{caption}</h4>" + frame.to_html(index=False, border=0)


class Summary(dict):
    """``tracedoc summary -f json``'s document (a dict equal to the CLI's JSON, ``schema_version``
    and ``summaries`` as keys); its tables as DataFrames (``devices``, ``top_kernels``,
    ``top_api_calls``, ``copies``, ``cpu_threads``, ``ranks``), and HTML tables in a notebook."""

    @property
    def trace(self) -> dict[str, Any]:
        """The summary of the trace (the document's one entry)."""
        return self["summaries"][0]

    def _frame(self, key: str) -> pandas.DataFrame:
        import pandas

        return pandas.DataFrame(self.trace.get(key) or [])

    @property
    def devices(self) -> pandas.DataFrame:
        """One row per GPU: span, busy time and share, kernels, copies, gaps, HTA's breakdown."""
        return self._frame("devices")

    @property
    def top_kernels(self) -> pandas.DataFrame:
        return self._frame("top_kernels")

    @property
    def top_api_calls(self) -> pandas.DataFrame:
        return self._frame("top_api_calls")

    @property
    def copies(self) -> pandas.DataFrame:
        return self._frame("copies")

    @property
    def cpu_threads(self) -> pandas.DataFrame:
        return self._frame("cpu_threads")

    @property
    def ranks(self) -> pandas.DataFrame:
        """One row per GPU of a multi-GPU trace (step median, compute, exposed communication,
        collective skew); empty for one GPU."""
        import pandas

        return pandas.DataFrame((self.trace.get("ranks") or {}).get("gpus") or [])

    def _repr_html_(self) -> str:
        t = self.trace
        head = (
            f"<p><b>{t['input']}</b>: {t['producer']}, {t['span_ns'] / 1e6:.1f} ms, "
            f"{t['gpu_operations']} GPU operations, {t['api_calls']} API calls</p>"
        )
        steps = t.get("steps")
        if steps:
            head += (
                f"<p>{steps['count']} steps ({steps['source']}): median {steps['median_cpu_ns'] / 1e6:.2f} ms, "
                f"GPU busy {steps['median_busy_pct']:.1f}% of a step</p>"
            )
        devices = self.devices
        if not devices.empty:
            devices = devices[["pid", "device", "name", "busy_pct", "kernels", "kernel_ns", "memcpys", "longest_gap_ns"]]
        return (
            head
            + _html_table(devices, "GPUs")
            + _html_table(self.top_kernels, "Top kernels")
            + _html_table(self.top_api_calls, "Top API calls")
            + _html_table(self.ranks, "Ranks")
        )


class Diagnosis(dict):
    """``tracedoc diagnose -f json``'s document (a dict equal to the CLI's JSON); ``findings`` as a
    DataFrame, and an HTML table of them in a notebook."""

    @property
    def trace(self) -> dict[str, Any]:
        """The diagnosis of the trace (the document's one entry)."""
        return self["diagnoses"][0]

    @property
    def findings(self) -> pandas.DataFrame:
        """One row per finding, most costly first: id, severity, confidence, scope, title, the time
        it costs (savings_ns, savings_share) and the remedy; figures, offenders and ranges as lists."""
        import pandas

        return pandas.DataFrame(self.trace["findings"])

    def _repr_html_(self) -> str:
        findings = self.findings
        if findings.empty:
            return f"<p><b>{self.trace['input']}</b>: no findings</p>"
        shown = findings[["severity", "id", "scope", "title", "savings_share", "remedy"]]
        return f"<p><b>{self.trace['input']}</b>: {len(findings)} findings</p>" + shown.to_html(index=False, border=0)


def _batch(capsules: tuple[Any, Any]) -> pyarrow.RecordBatch:
    import pyarrow

    return pyarrow.RecordBatch._import_from_c_capsule(*capsules)


def _frame(batch: pyarrow.RecordBatch) -> pandas.DataFrame:
    """Report rows as a DataFrame that prints as the CSV does: integer columns with empty cells
    as the nullable Int64 (an int64 with NaN would print 1.0 for 1)."""
    import pandas
    import pyarrow

    columns = {}
    for field, column in zip(batch.schema, batch.columns):
        if pyarrow.types.is_integer(field.type) and column.null_count:
            columns[field.name] = column.to_pandas(types_mapper={pyarrow.int64(): pandas.Int64Dtype()}.get)
        else:
            columns[field.name] = column.to_pandas()
    return pandas.DataFrame(columns, index=pandas.RangeIndex(batch.num_rows))


class Trace:
    """An opened trace. Tables come out as ``pyarrow.Table`` over the engine's own memory (numeric
    columns are not copied; the trace stays alive as long as any table does)."""

    def __init__(self, core: Any) -> None:
        self._core = core

    def __repr__(self) -> str:
        rows = sum(n for _, n in self._core.row_counts())
        return f"<tracedoc.Trace {self.format} {self.path!r}: {rows} events>"

    @property
    def path(self) -> str:
        """The file or directory the trace was read from."""
        return self._core.path

    @property
    def format(self) -> str:
        """``nsys-sqlite``, ``kineto-json`` or ``capture``."""
        return self._core.format

    @property
    def tables(self) -> list[str]:
        """The names of the model's tables (``table()`` takes them), those without rows included."""
        return [name for name, _ in self._core.row_counts()]

    def row_counts(self) -> dict[str, int]:
        """Rows per table."""
        return dict(self._core.row_counts())

    def table(self, name: str) -> pyarrow.Table:
        """One table of the model as a ``pyarrow.Table``: the columns ``tracedoc.tables()[name]``
        declares, times in int64 ns, names dictionary-encoded over the trace's string pool, nulls
        where the source recorded no value. ``.to_pandas()`` and ``polars.from_arrow`` work from it."""
        import pyarrow

        return pyarrow.Table.from_batches([_batch(self._core.table(name))])

    def report(self, name: str, *args: str, filter_name: str | None = None) -> pandas.DataFrame:
        """A ``tracedoc stats`` report (``nsys stats`` names and columns) as a DataFrame whose
        ``to_csv(index=False)`` is the CSV ``tracedoc stats -r NAME -f csv`` writes. ``args`` are
        the report's arguments (``t.report("cuda_gpu_kern_sum", "base")``); ``filter_name`` keeps
        the rows whose name matches (``--filter-name``). Raises NoDataError when the trace lacks
        what the report needs (the CLI's SKIPPED line)."""
        request = ":".join([name, *args])
        return _frame(_batch(self._core.report(request, filter_name or "")))

    def sql(self, query: str) -> pandas.DataFrame:
        """``tracedoc sql``: one SELECT over the model's tables as SQL (docs/sql.md: kernels, memcpy,
        api, ranges, ops, ..., steps, memory, findings), as a DataFrame whose CSV is the CLI's."""
        return _frame(_batch(self._core.sql(query)))

    def analyze(self, rule: str, **options: Any) -> pandas.DataFrame:
        """A ``tracedoc analyze`` (= ``nsys analyze``) rule's rows as a DataFrame whose CSV is
        ``tracedoc analyze -r RULE[:key=value...] -f csv``'s. ``options`` are the rule's
        (``rows=``, ``gap=``, ``threshold=``, ``chunks=``, ``start=``, ``end=``, ``nvtx=``, ...):
        ``t.analyze("gpu_gaps", gap=100)``."""
        request = ":".join([rule, *(f"{key}={value}" for key, value in options.items())])
        return _frame(_batch(self._core.analyze(request)))

    def check(
        self,
        budget: str | os.PathLike[str],
        baseline: Trace | str | os.PathLike[str] | None = None,
        step_marker: str | None = None,
    ) -> dict[str, Any]:
        """What ``tracedoc check INPUT --budget FILE -f json`` prints: each limit of the budget, the
        measured value and whether it passed (``result["failed"]``, as the CLI's exit code 1).
        ``baseline`` (a trace or a path) overrides the budget's [baseline] path."""
        base = baseline._core if isinstance(baseline, Trace) else None
        base_path = "" if baseline is None or base is not None else os.fspath(baseline)
        return json.loads(self._core.check_json(os.fspath(budget), base, base_path, step_marker or ""))

    def view(
        self,
        window: str | None = None,
        colors: str = "default",
        max_events: int = 500_000,
        findings: bool = True,
        config: str | os.PathLike[str] | None = None,
        step_marker: str | None = None,
        height: int = 720,
    ) -> View:
        """The interactive timeline of ``tracedoc view`` (window "[START]/[END]" from the run's
        start; colors: default, critical or a colour scheme file). In Jupyter the returned object
        shows the page inline; ``.save(path)`` writes it."""
        html = self._core.view_html(
            colors,
            window or "",
            max_events,
            findings,
            "" if config is None else os.fspath(config),
            step_marker or "",
        )
        return View(html, height)

    def summary(self, top: int = 5, gap_ms: float = 1.0, step_marker: str | None = None) -> Summary:
        """What ``tracedoc summary -f json`` prints for this trace: time split, steps, top kernels
        and calls, per-GPU figures, exact ns and bytes (a Summary: the JSON as a dict, its tables as
        DataFrames, HTML in a notebook)."""
        if top < 0:
            raise TraceError("summary: top must not be negative")
        return Summary(json.loads(self._core.summary_json(top, gap_ms, step_marker or "")))

    def diagnose(self, config: str | os.PathLike[str] | None = None) -> Diagnosis:
        """What ``tracedoc diagnose -f json [--config FILE]`` prints: the findings, each with its
        evidence, figures and advice (a Diagnosis: the JSON as a dict, ``findings`` as a DataFrame,
        HTML in a notebook)."""
        return Diagnosis(json.loads(self._core.diagnose_json("" if config is None else os.fspath(config))))

    def to_parquet(self, directory: str | os.PathLike[str]) -> list[str]:
        """Writes every table with rows as ``DIRECTORY/<table>.parquet`` (the table's schema and
        field metadata kept); returns the paths written."""
        import pyarrow
        import pyarrow.parquet

        os.makedirs(directory, exist_ok=True)
        written = []
        for name, rows in self._core.row_counts():
            if rows == 0:
                continue
            path = os.path.join(os.fspath(directory), f"{name}.parquet")
            table = self.table(name)
            metadata = dict(table.schema.metadata or {})
            metadata[b"tracedoc.format"] = self.format.encode()
            # Written as the CLI writes its outputs: whole or not at all (a full disk leaves no
            # partial file), a device or FIFO in place.
            sink = pyarrow.BufferOutputStream()
            pyarrow.parquet.write_table(table.replace_schema_metadata(metadata), sink)
            _tracedoc.write_output(path, sink.getvalue().to_pybytes())
            written.append(path)
        return written
