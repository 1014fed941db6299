"""analyze, check, diff, view and the read filters from Python equal the command line's outputs
on the same real traces."""

from __future__ import annotations

import json
import re

import pytest
import tracedoc
from conftest import cli, shared_trace

# Two PyTorch traces of one ResNet-50 job (TensorBoard plugin samples): 0 and 4 data-loader workers.
BASE_TRACE = "kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
NEW_TRACE = "kineto/kineto/tb_plugin/samples/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz"

BUDGET = """[steps]
p50_max_ms = 120
[gpu]
busy_min_pct = 80
[[kernel]]
name = "sgemm"
share_max_pct = 30
[findings]
forbid = ["comb_pattern"]
"""


def frame_csv(frame) -> str:
    """The CLI's CSV of a report: nothing at all for one without rows, as nsys prints it."""
    return frame.to_csv(index=False, lineterminator="\n") if len(frame) else ""


def same_page(html: str) -> str:
    """A view page without its per-page script nonce (a fresh random one each time)."""
    return re.sub(r"nonce-[A-Za-z0-9+/=]+|nonce=\"[A-Za-z0-9+/=]+\"", "nonce", html)


@pytest.mark.parametrize(
    "rule, options",
    [
        ("cuda_memcpy_async", {}),
        ("cuda_memcpy_sync", {}),
        ("cuda_memset_sync", {}),
        ("cuda_api_sync", {}),
        ("gpu_gaps", {}),
        ("gpu_gaps", {"gap": 1}),
        ("gpu_time_util", {"threshold": 90, "chunks": 10}),
        ("gpu_gaps", {"gap": 1, "start": "1s", "end": "2s"}),
    ],
)
def test_analyze_is_the_cli_csv(nsys_trace, nsys_path, rule, options):
    request = ":".join([rule, *(f"{k}={v}" for k, v in options.items())])
    run = cli("analyze", "-f", "csv", "-r", request, str(nsys_path))
    assert run.returncode == 0, run.stderr
    assert frame_csv(nsys_trace.analyze(rule, **options)) == run.stdout


def test_analyze_finds_rows_and_rejects_unknown_rules(nsys_trace):
    assert len(nsys_trace.analyze("gpu_gaps", gap=1)) > 0
    assert "gpu_gaps" in tracedoc.rules()
    with pytest.raises(tracedoc.TraceError, match="unknown rule 'gpu_gap'"):
        nsys_trace.analyze("gpu_gap")
    with pytest.raises(tracedoc.TraceError, match="gap"):
        nsys_trace.analyze("gpu_gaps", gap="soon")


def test_check_is_the_cli_json(tmp_path):
    base, new = shared_trace(BASE_TRACE), shared_trace(NEW_TRACE)
    budget = tmp_path / "budget.toml"
    budget.write_text(BUDGET)
    trace = tracedoc.load(base)
    run = cli("check", "-f", "json", "--budget", str(budget), str(base))
    assert run.returncode in (0, 1), run.stderr
    result = trace.check(budget)
    assert result == json.loads(run.stdout)
    assert result["failed"] == (run.returncode == 1) * result["failed"]
    # Against a baseline trace, given as a path or as a trace already read.
    budget.write_text(BUDGET + "[baseline]\nstep_p50_regression_max_pct = 5\n")
    run = cli("check", "-f", "json", "--budget", str(budget), "--baseline", str(new), str(base))
    assert run.returncode in (0, 1), run.stderr
    assert trace.check(budget, baseline=new) == json.loads(run.stdout)
    assert trace.check(budget, baseline=tracedoc.load(new)) == json.loads(run.stdout)
    with pytest.raises(tracedoc.TraceError, match="need a baseline trace"):
        trace.check(budget)


def test_diff_is_the_cli_json():
    base, new = shared_trace(BASE_TRACE), shared_trace(NEW_TRACE)
    run = cli("diff", "-f", "json", str(base), str(new))
    assert run.returncode == 0, run.stderr
    expected = json.loads(run.stdout)
    assert tracedoc.diff(base, new) == expected
    assert tracedoc.diff(tracedoc.load(base), tracedoc.load(new)) == expected
    run = cli("diff", "-f", "json", "--alpha", "0.01", "--min-change", "10", str(base), str(new))
    assert tracedoc.diff(base, new, alpha=0.01, min_change=10) == json.loads(run.stdout)
    with pytest.raises(tracedoc.TraceError, match="--alpha must lie between 0 and 1"):
        tracedoc.diff(base, new, alpha=2)


def test_view_is_the_cli_page(kineto_trace, kineto_path, tmp_path):
    page = tmp_path / "view.html"
    run = cli("view", "-o", str(page), str(kineto_path))
    assert run.returncode == 0, run.stderr
    view = kineto_trace.view()
    assert same_page(view.html) == same_page(page.read_text(encoding="utf-8"))
    assert same_page(view.html) != view.html  # the nonce was there
    assert view.html.startswith("<!DOCTYPE html>")
    inline = view._repr_html_()
    assert inline.startswith("<iframe srcdoc=") and "&lt;!DOCTYPE html&gt;" in inline
    view.save(tmp_path / "saved.html")
    assert (tmp_path / "saved.html").read_text(encoding="utf-8") == view.html
    windowed = tmp_path / "window.html"
    run = cli("view", "-o", str(windowed), "--window", "200ms/400ms", "--colors", "critical", str(kineto_path))
    assert run.returncode == 0, run.stderr
    html = kineto_trace.view(window="200ms/400ms", colors="critical").html
    assert same_page(html) == same_page(windowed.read_text(encoding="utf-8"))
    with pytest.raises(tracedoc.TraceError, match="view: --window"):
        kineto_trace.view(window="soon")
    with pytest.raises(tracedoc.TraceError, match="nocolors"):
        kineto_trace.view(colors="nocolors")


def test_load_filters_are_the_cli_filters(nsys_path):
    for option, value in (("filter_time", "60.2s/60.3s"), ("filter_nvtx", "ncclSend/3")):
        flag = "--" + option.replace("_", "-")
        run = cli("stats", "-f", "csv", "-r", "cuda_gpu_kern_sum", flag, value, str(nsys_path))
        assert run.returncode == 0, run.stderr
        trace = tracedoc.load(nsys_path, **{option: value})
        frame = trace.report("cuda_gpu_kern_sum")
        assert 0 < len(frame) and frame_csv(frame) == run.stdout
        assert frame["Instances"].sum() < 4010
    with pytest.raises(tracedoc.TraceError):
        tracedoc.load(nsys_path, filter_time="later")
    with pytest.raises(tracedoc.TraceError, match="NVTX range 'ncclSend@NCCL/3' could not be found"):
        tracedoc.load(nsys_path, filter_nvtx="ncclSend@NCCL/3")
