"""The package on the bundled example export (examples/toy_training.sqlite, a real nsys-schema
export that the real `nsys stats` reads as tracedoc does): runs on any machine, ../shared or not."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.compute  # noqa: F401 (pa.compute)
import pytest
import tracedoc
from conftest import CHECKOUT, cli

EXAMPLE = CHECKOUT / "examples" / "toy_training.sqlite"


@pytest.fixture(scope="module")
def toy():
    return tracedoc.load(EXAMPLE)


def test_tables_of_the_example(toy):
    counts = toy.row_counts()
    assert (counts["kernels"], counts["memcpy"], counts["memset"], counts["api"], counts["ranges"]) == (68, 9, 4, 85, 28)
    kernels = toy.table("kernels")
    assert pa.compute.sum(pa.compute.subtract(kernels["end"], kernels["start"])).as_py() == 15256836
    names = kernels["name"].combine_chunks()
    assert pa.types.is_dictionary(names.type)
    assert names.dictionary_decode()[0].as_py() == "ampere_sgemm_128x64_tn"
    assert kernels["graph_node_id"].null_count == 68  # no CUDA graphs in the example


@pytest.mark.parametrize("report", tracedoc._tracedoc.default_reports())
def test_default_reports_print_the_cli_csv(toy, report):
    run = cli("stats", "-f", "csv", "-r", report, str(EXAMPLE))
    assert run.returncode == 0, run.stderr
    try:
        frame = toy.report(report)
    except tracedoc.NoDataError as skipped:
        assert run.stdout == ""
        assert "SKIPPED" in str(skipped)
        return
    assert frame.to_csv(index=False, lineterminator="\n") == run.stdout


def test_kernel_summary_figures(toy):
    top = toy.report("cuda_gpu_kern_sum")
    first = top.iloc[0]
    assert (first["Name"], first["Total Time (ns)"], first["Instances"]) == ("ampere_sgemm_64x64_nn", 8943132, 24)
    assert top["Total Time (ns)"].sum() == 15256836


def test_summary_and_diagnosis_of_the_example(toy):
    run = cli("summary", "-f", "json", str(EXAMPLE))
    assert run.returncode == 0, run.stderr
    assert toy.summary() == json.loads(run.stdout)
    run = cli("diagnose", "-f", "json", str(EXAMPLE))
    assert toy.diagnose() == json.loads(run.stdout)
    assert toy.diagnose()["diagnoses"][0]["findings"], "the example is built to show findings"


def test_errors_without_shared(tmp_path):
    with pytest.raises(tracedoc.TraceError, match="nothing.sqlite"):
        tracedoc.load(tmp_path / "nothing.sqlite")
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    with pytest.raises(tracedoc.TraceError, match="empty.sqlite"):
        tracedoc.load(empty)


def test_summary_and_findings_as_tables(toy):
    summary = toy.summary()
    assert isinstance(summary, tracedoc.Summary) and isinstance(summary, dict)
    devices = summary.devices
    assert devices["kernels"].tolist() == [68] and devices["kernel_ns"].tolist() == [15256836]
    assert summary.top_kernels.iloc[0]["name"] == "ampere_sgemm_64x64_nn"
    assert summary.ranks.empty  # one GPU
    page = summary._repr_html_()
    assert "<table" in page and "ampere_sgemm_64x64_nn" in page and "3 steps" in page
    diagnosis = toy.diagnose()
    findings = diagnosis.findings
    assert len(findings) == len(diagnosis.trace["findings"]) > 0
    assert set(findings.columns) >= {"id", "severity", "scope", "title", "savings_ns", "remedy"}
    assert findings.iloc[0]["id"] in diagnosis._repr_html_()
