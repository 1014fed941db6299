"""tracedoc on a Dask cluster: the engine mapped over the rank files of a training job, one rank
per task, so that each file is read where a worker runs, in parallel across machines, with the
memory of a worker bounded by one rank and only small results travelling back.

    from dask.distributed import Client
    import tracedoc.distributed as td

    client = Client("tcp://scheduler:8786")          # or none: a local cluster of processes
    for rank in td.rank_summaries("traces/job42/", client=client):
        print(rank.path, rank.error or rank.value.devices[["device", "busy_pct"]])

``summarize``, ``check``, ``diagnose`` and ``diff`` give, for whole jobs, the documents of
``tracedoc summary DIR``, ``check DIR``, ``diagnose DIR`` and ``diff BASE NEW``, equal to them:
each rank sends back a part (its figures, never its events) and the parts are merged here.

Bad input never stops the job: a rank whose file is missing, corrupt or too large for its
``max_memory`` comes back with ``error`` set to the one-line message the CLI prints, and the other
ranks' results intact. A worker that dies in the middle (killed, out of memory) has its ranks run
again on another worker by Dask, with the same results.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

import tracedoc

from . import _tracedoc

__all__ = [
    "JobCheck",
    "JobDiagnosis",
    "JobDiff",
    "JobSummary",
    "RankResult",
    "check",
    "diagnose",
    "diff",
    "map_ranks",
    "rank_files",
    "rank_summaries",
    "summarize",
]


@dataclass(frozen=True)
class RankResult:
    """What one rank file gave: ``value`` (what the function returned), or ``error`` (the file and
    what is wrong with it, as the CLI says it) when the file could not be read or analysed."""

    path: str
    value: Any = None
    error: str | None = None


def rank_files(paths_or_dir: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[str]:
    """The rank files of a job: a directory's PyTorch trace files as ``tracedoc summary DIR`` reads
    them (every ``*.json`` / ``*.json.gz`` that is a trace, by name), or the given files in order."""
    if isinstance(paths_or_dir, (str, os.PathLike)):
        path = os.fspath(paths_or_dir)
        if os.path.isdir(path):
            return list(_tracedoc.rank_files(path))
        return [path]
    return [os.fspath(p) for p in paths_or_dir]


def _run_rank(path: str, function: Callable[[tracedoc.Trace], Any], load_options: dict[str, Any]) -> RankResult:
    """One task: reads one rank file on the worker, applies the function, keeps only its result."""
    try:
        trace = tracedoc.load(path, **load_options)
        return RankResult(path, function(trace))
    except tracedoc.TraceError as error:
        return RankResult(path, error=str(error))


def _local_client():
    from dask.distributed import Client, LocalCluster

    # Processes, one thread each: a rank's read uses the worker's cores through tracedoc's own pool.
    cluster = LocalCluster(
        n_workers=max(1, min(os.cpu_count() or 1, 4)), threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    return Client(cluster), cluster


@contextlib.contextmanager
def _cluster(client: Any) -> Iterator[Any]:
    """The given client, or one of a local cluster started for the while of the block."""
    if client is not None:
        yield client
        return
    client, own = _local_client()
    try:
        yield client
    finally:
        client.close()
        own.close()


def map_ranks(
    func: Callable[[tracedoc.Trace], Any],
    paths_or_dir: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    client: Any = None,
    **load_options: Any,
) -> list[RankResult]:
    """``func(tracedoc.load(file, **load_options))`` for every rank file, one Dask task each, in
    file order. ``func`` runs on the workers (it must pickle: a module-level function, or any
    callable cloudpickle takes) and should return something small. Without a client, a local
    cluster of worker processes runs the tasks and is closed afterwards."""
    files = rank_files(paths_or_dir)
    with _cluster(client) as client:
        # pure=False: a file may change between runs; each call reads it again.
        futures = client.map(_run_rank, files, function=func, load_options=load_options, pure=False)
        return client.gather(futures)


def _summary(trace: tracedoc.Trace, top: int, gap_ms: float, step_marker: str | None) -> tracedoc.Summary:
    return trace.summary(top=top, gap_ms=gap_ms, step_marker=step_marker)


def rank_summaries(
    paths_or_dir: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    client: Any = None,
    top: int = 5,
    gap_ms: float = 1.0,
    step_marker: str | None = None,
    **load_options: Any,
) -> list[RankResult]:
    """Each rank's ``tracedoc summary`` (a tracedoc.Summary per file: its GPUs, steps, top kernels
    and calls), computed where the file is read."""
    from functools import partial

    return map_ranks(partial(_summary, top=top, gap_ms=gap_ms, step_marker=step_marker), paths_or_dir, client,
                     **load_options)


def _summary_part(trace: tracedoc.Trace, gap_ms: float, step_marker: str | None, sketch_capacity: int) -> bytes:
    return trace._core.summary_part(gap_ms, step_marker or "", sketch_capacity)


class JobSummary(tracedoc.Summary):
    """``tracedoc summary DIR``'s document for a job summarized on a cluster (a tracedoc.Summary),
    with ``errors``: the rank files that could not be read, each a RankResult naming the file and
    what is wrong with it (the summary is then that of the other ranks)."""

    errors: list[RankResult]


# What the directory reader passes over: JSON beside the traces that is not a trace.
_NOT_A_TRACE = "not a PyTorch profiler trace"


def _job(paths_or_dir: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> tuple[list[str], str]:
    """A job's rank files, and the directory their parts merge as (empty: a single file)."""
    files = rank_files(paths_or_dir)
    if isinstance(paths_or_dir, (str, os.PathLike)) and os.path.isdir(paths_or_dir):
        directory = os.fspath(paths_or_dir)
    else:
        directory = os.path.commonpath([os.path.abspath(f) for f in files]) if len(files) > 1 else ""
    return files, directory


def _gather(
    files: list[str], part: Callable[[tracedoc.Trace], Any], client: Any, load_options: dict[str, Any], directory: str
) -> tuple[list[RankResult], list[RankResult]]:
    """Each rank file's part (computed on the workers), and the rank files that could not be read;
    raises when none could. Files beside the traces that are not traces are passed over, as the
    directory reader passes over them."""
    results = map_ranks(part, files, client, **load_options)
    done = [r for r in results if r.error is None]
    errors = [r for r in results if r.error is not None and _NOT_A_TRACE not in r.error]
    if not done:
        raise tracedoc.TraceError(errors[0].error if errors else f"{directory}: no PyTorch profiler traces")
    return done, errors


def _job_parts(
    paths_or_dir: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    part: Callable[[tracedoc.Trace], bytes],
    client: Any,
    load_options: dict[str, Any],
) -> tuple[str, list[bytes], list[RankResult]]:
    """Each rank file's part, the directory the parts merge as, and the files that could not be read."""
    files, directory = _job(paths_or_dir)
    done, errors = _gather(files, part, client, load_options, directory)
    return directory, [r.value for r in done], errors


def summarize(
    paths_or_dir: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    client: Any = None,
    top: int = 5,
    gap_ms: float = 1.0,
    step_marker: str | None = None,
    sketch_capacity: int = 2048,
    **load_options: Any,
) -> JobSummary:
    """The summary of a whole job, computed across a Dask cluster: what ``tracedoc summary DIR -f
    json`` prints for the same rank files (per-GPU figures, top kernels and calls, steps, the Ranks
    section with the straggler and the collective skew), equal to it figure for figure but for the
    top kernels' median and p95 durations, which come from mergeable sketches.

    Each task reads one rank file and sends back its summary part (every name's count and total,
    each step's values, the collectives' start times, per-GPU figures, each kernel's durations in a
    sketch of at most ``sketch_capacity`` values a level: tens of kilobytes, never the events); the
    parts are merged here as the directory reader merges the ranks (by rank, on the earliest clock
    base). Counts, totals, extremes, step figures and the Ranks section are exact. A kernel that ran
    more than ``sketch_capacity`` times has its median and p95 within ``quantile_rank_error`` ranks
    of the exact ones (about n log2(n / capacity) / capacity for n instances: under 0.5% of them
    for a million instances at the default); ``sketch_capacity=0`` sends every duration, and the
    whole document then equals the CLI's. A rank file that cannot be read leaves its error in
    ``errors`` and the other ranks' summary intact."""
    if top < 0 or gap_ms < 0 or sketch_capacity < 0:
        raise tracedoc.TraceError("summary: top, gap_ms and sketch_capacity must not be negative")
    from functools import partial

    part = partial(_summary_part, gap_ms=gap_ms, step_marker=step_marker, sketch_capacity=sketch_capacity)
    directory, parts, errors = _job_parts(paths_or_dir, part, client, load_options)
    summary = JobSummary(json.loads(_tracedoc.merge_summary_parts_json(parts, top, directory)))
    summary.errors = errors
    return summary


def _ranked_parts(
    paths_or_dir: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    part: Callable[..., tuple[bytes, bool]],
    client: Any,
    load_options: dict[str, Any],
) -> tuple[str, list[bytes], list[RankResult]]:
    """Each rank file's part where the part names the ranks as the job does: ``part(trace, places,
    files)`` returns its bytes and whether the trace took its place as its rank (it had none).
    Returns the directory the parts merge as, the parts and the files that could not be read."""
    from functools import partial

    files, directory = _job(paths_or_dir)
    # Rank files of a directory (or a list) are numbered as the directory reader numbers them; a
    # single file keeps what it says.
    places = {f: i if directory else -1 for i, f in enumerate(files)}
    done, errors = _gather(files, partial(part, places=places, files=len(files)), client, load_options, directory)
    # A trace without a rank is numbered by its place among the job's traces, and a job of one trace
    # names its process "trace": where files that were not traces moved those, the ranks concerned
    # are read again with their places among the traces.
    truth = {r.path: i if directory else -1 for i, r in enumerate(done)}
    several = len(done) > 1
    again = [r.path for r in done if (r.value[1] and places[r.path] != truth[r.path]) or (len(files) > 1) != several]
    if again:
        redone = _gather(again, partial(part, places=truth, files=len(done)), client, load_options, directory)[0]
        by_path = {r.path: r for r in redone}
        done = [by_path.get(r.path, r) for r in done]
    return directory, [r.value[0] for r in done], errors


def _diagnose_part(trace: tracedoc.Trace, config: str, places: dict[str, int], files: int) -> tuple[bytes, bool]:
    return trace._core.diagnose_part(config, places[trace.path], files)


class JobDiagnosis(tracedoc.Diagnosis):
    """``tracedoc diagnose DIR -f json``'s document for a job diagnosed on a cluster (a
    tracedoc.Diagnosis), with ``errors``: the rank files that could not be read (the diagnosis is
    then that of the other ranks)."""

    errors: list[RankResult]


def diagnose(
    paths_or_dir: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    config: str | os.PathLike[str] | None = None,
    client: Any = None,
    **load_options: Any,
) -> JobDiagnosis:
    """The diagnosis of a whole job, computed across a Dask cluster: what ``tracedoc diagnose DIR -f
    json [--config FILE]`` prints for the same rank files, equal to it finding for finding. The
    workers read the configuration file by its path, as they read the rank files.

    Each task diagnoses its rank with the rules that look at one rank (its GPUs, its threads) and
    sends back their findings with how each was rated, its computation time and every kernel's
    durations; the findings are rated again here on the job's time basis (the longest rank's), and
    the rules that compare ranks (straggler, long_tail) run on the joined ranks. A job whose ranks
    find their steps in different ways (a step marker in some, ProfilerStep ranges in others)
    raises TraceError: only the whole directory in one process diagnoses it as one."""
    from functools import partial

    config = "" if config is None else os.fspath(config)
    directory, parts, errors = _ranked_parts(paths_or_dir, partial(_diagnose_part, config=config), client,
                                             load_options)
    report = JobDiagnosis(json.loads(_tracedoc.merge_diagnose_parts_json(parts, config, directory)))
    report.errors = errors
    return report


def _diff_part(trace: tracedoc.Trace, options: tuple, places: dict[str, int], files: int) -> tuple[bytes, bool]:
    return trace._core.diff_part(*options, places[trace.path], files)


class JobDiff(dict):
    """``tracedoc diff BASE NEW -f json``'s document for two jobs compared on a cluster, with
    ``errors``: the rank files (of either job) that could not be read."""

    errors: list[RankResult]


def diff(
    base: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    new: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    client: Any = None,
    alpha: float = 0.05,
    min_change: float = 5.0,
    step_marker: str | None = None,
    findings: bool = True,
    config: str | os.PathLike[str] | None = None,
    **load_options: Any,
) -> JobDiff:
    """Two jobs compared across a Dask cluster: what ``tracedoc diff BASE NEW -f json`` prints for
    the same rank files (the step time, the split of each GPU's steps, every kernel's, operator's
    and range's change with its significance, each rank before and after, the findings that came or
    went), equal to it.

    Each task reads one rank file of either job and sends back what merges exactly: each GPU's time
    split, its steps and computation time, the collectives' start times, every kernel's, operator's
    and range's per-instance durations (the rank test needs every value) and its diagnosis part.
    Raises TraceError where only the whole directories in one process compare: ranks that find
    their steps in different ways, or a rank without steps of its own in a job with steps."""
    from functools import partial

    options = (alpha, min_change, step_marker or "", findings, "" if config is None else os.fspath(config))
    part = partial(_diff_part, options=options)
    with _cluster(client) as client:
        base_directory, base_parts, base_errors = _ranked_parts(base, part, client, load_options)
        new_directory, new_parts, new_errors = _ranked_parts(new, part, client, load_options)
    report = JobDiff(json.loads(_tracedoc.diff_parts_json(base_parts, base_directory, new_parts, new_directory,
                                                          *options)))
    report.errors = base_errors + new_errors
    return report


def _measure_part(trace: tracedoc.Trace, budget: str, step_marker: str | None, baseline: bool,
                  places: dict[str, int], files: int) -> tuple[bytes, bool]:
    return trace._core.measure_part(budget, step_marker or "", baseline, places[trace.path], files)


class JobCheck(dict):
    """``tracedoc check DIR --budget FILE -f json``'s document for a job checked on a cluster (each
    limit, the measured value, whether it passed: ``report["failed"]``), with ``errors``: the rank
    files (of the job or of its baseline) that could not be read."""

    errors: list[RankResult]


def check(
    paths_or_dir: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    budget: str | os.PathLike[str],
    baseline: str | os.PathLike[str] | None = None,
    client: Any = None,
    step_marker: str | None = None,
    **load_options: Any,
) -> JobCheck:
    """A CI gate on a whole job, computed across a Dask cluster: what ``tracedoc check DIR --budget
    FILE -f json`` prints for the same rank files, equal to it. ``baseline`` (a rank directory or
    file) overrides the budget's [baseline] path; its ranks are read on the cluster too. The
    workers read the budget file by its path, as they read the rank files.

    Each task sends back its rank's measures (its step lengths, each GPU's busy and copy time in
    its steps and its computation time, memory peaks, every kernel name's count and total, the
    collectives' start times) and, for a [findings] budget, the forbidden rules' diagnosis part
    (as ``diagnose`` merges them), merged here exactly. A [findings] budget on a job whose ranks find
    their steps in different ways raises TraceError, as ``diagnose`` does."""
    from functools import partial

    budget = os.fspath(budget)
    base_path = _tracedoc.job_check_baseline(budget, "" if baseline is None else os.fspath(baseline))
    part = partial(_measure_part, budget=budget, step_marker=step_marker, baseline=False)
    base_directory, base_parts = "", None
    with _cluster(client) as client:
        directory, parts, errors = _ranked_parts(paths_or_dir, part, client, load_options)
        if base_path:
            base_part = partial(_measure_part, budget=budget, step_marker=step_marker, baseline=True)
            base_directory, base_parts, base_errors = _ranked_parts(base_path, base_part, client, load_options)
            errors += base_errors
    report = JobCheck(json.loads(_tracedoc.check_parts_json(budget, step_marker or "", parts, directory, base_parts,
                                                            base_directory)))
    report.errors = errors
    return report
