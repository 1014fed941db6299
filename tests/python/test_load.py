"""tracedoc.load on every kind of input, and bad input as a TraceError with the CLI's one-line
message (never a crashed interpreter)."""

from __future__ import annotations

import gzip
import shutil

import pytest
import tracedoc
from conftest import RANK_DIRECTORY, cli, shared_trace


def test_formats_and_counts(nsys_trace, kineto_trace):
    assert nsys_trace.format == "nsys-sqlite"
    assert kineto_trace.format == "kineto-json"
    assert nsys_trace.row_counts()["kernels"] == 4010
    assert repr(nsys_trace).startswith("<tracedoc.Trace nsys-sqlite ")


def test_rank_directory_and_rank(tmp_path):
    directory = shared_trace(RANK_DIRECTORY)
    everything = tracedoc.load(directory)
    run = cli("sql", "-f", "csv", str(directory), "SELECT count(*), count(DISTINCT rank) FROM kernels")
    count, ranks = run.stdout.splitlines()[1].split(",")
    assert everything.row_counts()["kernels"] == int(count)
    one = tracedoc.load(directory, rank=0)
    run = cli("sql", "-f", "csv", "--rank", "0", str(directory), "SELECT count(*) FROM kernels")
    assert one.row_counts()["kernels"] == int(run.stdout.splitlines()[1])
    assert int(ranks) == 1 or one.row_counts()["kernels"] < everything.row_counts()["kernels"]


def test_threads_do_not_change_the_model(nsys_path):
    one = tracedoc.load(nsys_path, threads=1)
    seven = tracedoc.load(nsys_path, threads=7)
    assert one.row_counts() == seven.row_counts()
    for name in ("kernels", "api", "ranges"):
        assert one.table(name).equals(seven.table(name))


def test_bad_inputs_raise_trace_error(tmp_path, nsys_path):
    missing = tmp_path / "missing.sqlite"
    with pytest.raises(tracedoc.TraceError, match="missing.sqlite"):
        tracedoc.load(missing)
    not_a_trace = tmp_path / "notes.json"
    not_a_trace.write_text('{"hello": ')
    with pytest.raises(tracedoc.TraceError, match="notes.json"):
        tracedoc.load(not_a_trace)
    truncated = tmp_path / "truncated.sqlite"
    with open(nsys_path, "rb") as src, open(truncated, "wb") as dst:
        dst.write(src.read(100_000))
    with pytest.raises(tracedoc.TraceError, match="truncated.sqlite"):
        tracedoc.load(truncated).table("kernels")
    with pytest.raises(tracedoc.TraceError, match="threads"):
        tracedoc.load(nsys_path, threads=0)
    with pytest.raises(tracedoc.TraceError):
        tracedoc.load(nsys_path, max_memory="lots")


def test_memory_limit_is_an_error_not_an_exit(kineto_path, tmp_path):
    big = tmp_path / "trace.json"
    with gzip.open(kineto_path, "rb") as src, open(big, "wb") as dst:
        shutil.copyfileobj(src, dst)
    with pytest.raises(tracedoc.TraceError, match="memory"):
        tracedoc.load(big, max_memory="1M")
    assert tracedoc.load(big).row_counts()["kernels"] > 0  # and the interpreter goes on


def test_python_threads_load_at_once(nsys_path):
    """Loads and reports from several Python threads at once, each asking for another pool size
    (the pool is resized only between engine calls): every result is the one-thread result."""
    from concurrent.futures import ThreadPoolExecutor

    def work(threads: int):
        trace = tracedoc.load(nsys_path, threads=threads)
        return trace.row_counts(), trace.report("cuda_gpu_kern_sum").to_csv(index=False)

    expected = work(1)
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(work, [1, 2, 3, 7, 2, 1, 7, 3]))
    assert all(result == expected for result in results)
