"""Reports, summary and diagnosis from Python equal the command line's outputs on the same real
traces: report DataFrames print the CLI's CSV byte for byte, summary() and diagnose() are its JSON."""

from __future__ import annotations

import json

import pytest
import tracedoc
from conftest import cli

# Every report either trace kind answers (SKIPPED ones are checked as NoDataError below).
NSYS_REPORTS = [
    "nvtx_sum",
    "cuda_api_sum",
    "cuda_gpu_kern_sum",
    "cuda_gpu_mem_time_sum",
    "cuda_gpu_mem_size_sum",
    "cuda_gpu_sum",
    "cuda_kern_exec_sum",
    "nvtx_kern_sum",
    "cuda_gpu_trace",
    "cuda_api_trace",
]
KINETO_REPORTS = ["cuda_gpu_kern_sum", "cuda_api_sum", "cuda_gpu_trace", "cuda_gpu_mem_time_sum"]


def cli_csv(path, *request: str) -> str:
    run = cli("stats", "-f", "csv", "-r", ":".join(request), str(path))
    assert run.returncode == 0, run.stderr
    return run.stdout


def frame_csv(frame) -> str:
    return frame.to_csv(index=False, lineterminator="\n")


@pytest.mark.parametrize("report", NSYS_REPORTS)
def test_nsys_report_csv_is_the_cli_csv(nsys_trace, nsys_path, report):
    frame = nsys_trace.report(report)
    assert len(frame) > 0
    assert frame_csv(frame) == cli_csv(nsys_path, report)


@pytest.mark.parametrize("report", KINETO_REPORTS)
def test_kineto_report_csv_is_the_cli_csv(kineto_trace, kineto_path, report):
    assert frame_csv(kineto_trace.report(report)) == cli_csv(kineto_path, report)


def test_report_arguments_and_name_filter(nsys_trace, nsys_path):
    base = nsys_trace.report("cuda_gpu_kern_sum", "base")
    assert frame_csv(base) == cli_csv(nsys_path, "cuda_gpu_kern_sum", "base")
    kept = nsys_trace.report("cuda_gpu_kern_sum", filter_name="nvjet")
    run = cli("stats", "-f", "csv", "-r", "cuda_gpu_kern_sum", "--filter-name", "nvjet", str(nsys_path))
    assert frame_csv(kept) == run.stdout
    assert 0 < len(kept) < len(nsys_trace.report("cuda_gpu_kern_sum"))


def test_report_columns_are_typed(nsys_trace):
    frame = nsys_trace.report("cuda_gpu_kern_sum")
    assert list(frame.columns)[:3] == ["Time (%)", "Total Time (ns)", "Instances"]
    assert str(frame["Total Time (ns)"].dtype) == "int64"
    assert str(frame["Avg (ns)"].dtype) == "float64"
    assert frame["Total Time (ns)"].sum() == 535200650  # every kernel's time, as in the kernels table
    assert frame["Instances"].sum() == 4010


def test_no_data_and_unknown_reports(nsys_trace, nsys_path):
    with pytest.raises(tracedoc.NoDataError, match="does not contain OS Runtime trace data"):
        nsys_trace.report("osrt_sum")
    assert issubclass(tracedoc.NoDataError, tracedoc.TraceError)
    with pytest.raises(tracedoc.TraceError, match="unknown report"):
        nsys_trace.report("no_such_report")
    assert "cuda_gpu_kern_sum" in tracedoc.reports()


def test_summary_is_the_cli_json(nsys_trace, nsys_path, kineto_trace, kineto_path):
    for trace, path in ((nsys_trace, nsys_path), (kineto_trace, kineto_path)):
        run = cli("summary", "-f", "json", str(path))
        assert run.returncode == 0, run.stderr
        assert trace.summary() == json.loads(run.stdout)
    run = cli("summary", "-f", "json", "--top", "2", "--gap", "0.5", str(nsys_path))
    assert nsys_trace.summary(top=2, gap_ms=0.5) == json.loads(run.stdout)


def test_diagnose_is_the_cli_json(nsys_trace, nsys_path, kineto_trace, kineto_path):
    for trace, path in ((nsys_trace, nsys_path), (kineto_trace, kineto_path)):
        run = cli("diagnose", "-f", "json", str(path))
        assert run.returncode in (0, 1), run.stderr
        assert trace.diagnose() == json.loads(run.stdout)


SQL_QUERIES = [
    "SELECT name, count(*) AS n, sum(duration_ns) AS total FROM kernels GROUP BY name ORDER BY total DESC",
    "SELECT rank, pid, tid, count(*) AS calls, avg(duration_ns) AS mean FROM api GROUP BY 1, 2, 3",
    "SELECT * FROM memcpy ORDER BY start_ns LIMIT 50",
    "SELECT * FROM steps",
]


@pytest.mark.parametrize("query", SQL_QUERIES)
def test_sql_is_the_cli_query(nsys_trace, nsys_path, kineto_trace, kineto_path, query):
    for trace, path in ((nsys_trace, nsys_path), (kineto_trace, kineto_path)):
        run = cli("sql", "-f", "csv", str(path), query)
        assert run.returncode == 0, run.stderr
        assert frame_csv(trace.sql(query)) == run.stdout


def test_sql_errors(nsys_trace):
    with pytest.raises(tracedoc.TraceError, match="no such table: kernel"):
        nsys_trace.sql("SELECT * FROM kernel")
    with pytest.raises(tracedoc.TraceError, match="only queries that read"):
        nsys_trace.sql("DELETE FROM kernels")
    frame = nsys_trace.sql("SELECT count(*) AS n FROM kernels")
    assert frame["n"].tolist() == [4010]
