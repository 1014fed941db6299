"""tracedoc.distributed on a real Dask cluster: a `dask scheduler` and two `dask worker` processes on
127.0.0.1, started and stopped here. Each rank's result equals what the CLI gives for that file; a
corrupt rank file comes back as an error naming it, the other ranks intact; a worker killed in the
middle of the job has its ranks run again elsewhere, with the same results."""

from __future__ import annotations

import concurrent.futures
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy
import pytest
import tracedoc
from conftest import cli, shared_trace

pytest.importorskip("distributed", reason="dask.distributed not installed (pip install '.[test]')")
import tracedoc.distributed as td  # noqa: E402
from dask.distributed import Client  # noqa: E402

TWO_RANKS = "kineto/HolisticTraceAnalysis/tests/data/trace_filter"
SIX_FILES = "kineto/TraceLens/tests/traces/mi300"
HERE = Path(__file__).resolve().parent


class Cluster:
    """A scheduler and worker processes, as a job's cluster runs them (here all on 127.0.0.1)."""

    def __init__(self, workdir: Path, workers: int) -> None:
        self.dask = str(Path(sys.executable).parent / "dask")
        self.file = workdir / "scheduler.json"
        self.env = dict(os.environ, PYTHONPATH=str(HERE))
        self.scheduler = self._start("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard")
        began = time.monotonic()
        while not self.file.exists():
            if time.monotonic() - began > 60 or self.scheduler.poll() is not None:
                self.stop()
                raise RuntimeError("the dask scheduler did not start")
            time.sleep(0.1)
        self.workers = [self._start("worker", "--nthreads", "1", "--no-nanny", "--host", "127.0.0.1",
                                    "--no-dashboard") for _ in range(workers)]
        self.client = Client(scheduler_file=str(self.file), timeout=60)
        self.client.wait_for_workers(workers, timeout=60)

    def _start(self, role: str, *args: str) -> subprocess.Popen:
        command = [self.dask, role, *args, "--scheduler-file", str(self.file)]
        return subprocess.Popen(command, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)

    def kill_busy_worker(self, index: int) -> None:
        """SIGKILLs a worker while it runs a task (the scheduler lists one in progress on it)."""
        victim = self.workers[index]
        address = next(a for a, pid in self.client.run(os.getpid).items() if pid == victim.pid)
        began = time.monotonic()
        while not self.client.processing().get(address):
            if time.monotonic() - began > 60:
                raise RuntimeError(f"worker {address} got no task")
            time.sleep(0.01)
        os.killpg(victim.pid, signal.SIGKILL)
        victim.wait()

    def workers_left(self) -> int:
        """The workers the scheduler still has, once it has noticed the lost ones (their
        connections break at once; the client refreshes what it knows every few seconds)."""
        began = time.monotonic()
        alive = sum(w.poll() is None for w in self.workers)
        while len(self.client.scheduler_info()["workers"]) != alive and time.monotonic() - began < 60:
            time.sleep(0.1)
        return len(self.client.scheduler_info()["workers"])

    def stop(self) -> None:
        if getattr(self, "client", None) is not None:
            self.client.close()
        for process in [*getattr(self, "workers", []), self.scheduler]:
            if process.poll() is None:
                process.terminate()
        for process in [*getattr(self, "workers", []), self.scheduler]:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("dask"), workers=2)
    yield c
    c.stop()


def cli_summary_top(path: str, top: int) -> dict:
    run = cli("summary", "-f", "json", "--top", str(top), path)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def cli_summary(path: str) -> dict:
    return cli_summary_top(path, 5)


def kernel_durations(path: Path) -> dict[str, numpy.ndarray]:
    """Every kernel instance's duration, ns, by kernel name, sorted: the exact distributions."""
    kernels = tracedoc.load(path).table("kernels").to_pandas()
    kernels["duration"] = kernels["end"] - kernels["start"]
    return {str(name): numpy.sort(group.to_numpy()) for name, group in kernels.groupby("name", observed=True)["duration"]}


def assert_summary_as_cli(summary: dict, cli_doc: dict, directory: Path, max_error_share: float = 1.0) -> int:
    """`summary` equals the CLI's document but for the top kernels' median and p95 where they come from
    merged sketches: each of those within its quantile_rank_error of the exact rank among the
    instances (analysis/quantile_sketch.h), that error below `max_error_share` of them. Returns how many
    kernels were sketched."""
    got, want = json.loads(json.dumps(summary)), json.loads(json.dumps(cli_doc))
    durations, sketched = None, 0
    for mine, theirs in zip(got["summaries"][0]["top_kernels"], want["summaries"][0]["top_kernels"]):
        assert theirs["quantile_rank_error"] == 0  # the CLI's are exact
        error = mine["quantile_rank_error"]
        if error == 0:
            continue
        sketched += 1
        durations = durations or kernel_durations(directory)
        values = durations[mine["name"]]
        assert len(values) == mine["count"] and error < max_error_share * len(values)
        for key, fraction in (("median_ns", 0.5), ("p95_ns", 0.95)):
            value, target = mine.pop(key), math.floor(fraction * (len(values) - 1))
            theirs.pop(key)
            assert numpy.searchsorted(values, value, "left") <= target + 1 + error, key
            assert numpy.searchsorted(values, value, "right") >= target + 1 - error, key
        mine.pop("quantile_rank_error"), theirs.pop("quantile_rank_error")
    assert got == want
    return sketched


def synth_job(directory: Path, spec: str) -> Path:
    """A two-rank job written by `tracedoc synth examples/synth/SPEC.toml`, one file per rank."""
    directory.mkdir()
    run = cli("synth", str(HERE.parents[1] / f"examples/synth/{spec}.toml"), "--format", "kineto", "-o",
              str(directory / "job"))
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in directory.iterdir()) == ["job_rank0.json", "job_rank1.json"]
    return directory


def straggler_job(directory: Path) -> Path:
    """A two-rank job whose rank 1 starts its all-reduces late: collectives to match across the
    ranks, files on their own clock bases."""
    return synth_job(directory, "straggler")


def clean_job(directory: Path) -> Path:
    """The straggler job's clean twin: the same model, ranks alike."""
    return synth_job(directory, "clean_2ranks")


def test_the_job_summary_is_the_cli_summary_of_the_directory(cluster, tmp_path):
    # Each rank's part, merged on the client, equals `tracedoc summary DIR` figure for figure: the
    # per-GPU rows, the top kernels and calls across ranks, the steps' medians, the Ranks section.
    job = straggler_job(tmp_path / "straggler")
    summary = td.summarize(job, client=cluster.client)
    assert summary.errors == []
    assert summary == cli_summary(str(job))
    ranks = summary.trace["ranks"]
    assert ranks["collectives_matched"] == 36 and ranks["most_often_last"] == "rank 1 GPU 1 (NVIDIA A100-SXM4-80GB)"
    assert summary.ranks["steps"].tolist() == [12, 12]


def test_real_rank_directories_summarize_as_the_cli(cluster):
    sketched = 0
    for relative in (TWO_RANKS, "kineto/TraceLens/tests/traces/h100", "kineto/kineto/tb_plugin/samples/resnet50_num_workers_4"):
        directory = shared_trace(relative)
        cli_doc = cli_summary_top(str(directory), 20)
        # Every duration sent: the whole document is the CLI's.
        assert td.summarize(directory, client=cluster.client, top=20, sketch_capacity=0) == cli_doc
        # Small sketches: the kernels that ran more often have their median and p95 within the bound.
        summary = td.summarize(directory, client=cluster.client, top=20, sketch_capacity=16)
        sketched += assert_summary_as_cli(summary, cli_doc, directory)
    assert sketched >= 20


def test_real_rank_directories_check_as_the_cli(cluster, tmp_path):
    directory = shared_trace("kineto/kineto/tb_plugin/samples/resnet50_num_workers_4")
    budget = tmp_path / "budget.toml"
    budget.write_text(every_limit(shared_trace(TWO_RANKS)))
    report = td.check(directory, budget, client=cluster.client)
    assert report == cli_check(str(directory), budget)
    assert [round(r["actual"], 3) for r in report["checks"] if r["check"] == "steps.p50_max_ms"] == [125.191]


def every_limit(baseline: Path) -> str:
    """tests/budgets/every_limit.toml (every limit but findings) with a [baseline] of `baseline`."""
    text = (HERE.parent / "budgets" / "every_limit.toml").read_text()
    return text + f'[baseline]\npath = "{baseline}"\nstep_p50_regression_max_pct = 5\nbusy_drop_max_pct = 5\n'


def cli_check(path: str, budget: Path) -> dict:
    run = cli("check", "--budget", str(budget), "-f", "json", path)
    assert run.returncode in (0, 1), run.stderr
    return json.loads(run.stdout)


def test_the_job_check_is_the_cli_check_of_the_directory(cluster, tmp_path):
    # Every limit a budget can set but findings (below), against a baseline job: the straggler job
    # checked against a clean two-rank one, both read rank by rank on the cluster.
    job = straggler_job(tmp_path / "straggler")
    clean = clean_job(tmp_path / "clean")
    budget = tmp_path / "budget.toml"
    budget.write_text(every_limit(clean))
    report = td.check(job, budget, client=cluster.client)
    assert report.errors == []
    assert report == cli_check(str(job), budget)
    assert report["failed"] > 0
    checks = {r["check"] for r in report["checks"]}
    assert {"ranks.compute_imbalance_max", "ranks.skew_p50_max_ms", "baseline.step_p50_regression_max_pct"} <= checks
    # A [findings] budget: the forbidden rules' diagnosis, merged from the ranks' parts.
    forbid = tmp_path / "forbid.toml"
    forbid.write_text('[findings]\nforbid = ["straggler", "exposed_comm"]\n')
    gate = td.check(job, forbid, client=cluster.client)
    assert gate == cli_check(str(job), forbid)
    assert [(c["scope"], c["status"]) for c in gate["checks"]] == [("straggler", "fail"), ("exposed_comm", "fail")]


def cli_diagnosis(path: str, *args: str) -> dict:
    run = cli("diagnose", "-f", "json", *args, path)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_the_job_diagnosis_is_the_cli_diagnosis_of_the_directory(cluster, tmp_path):
    # Rank 0's exposed communication, found in its part and rated on the job's basis (rank 1's steps
    # are longer), the straggler, found by comparing the ranks' parts, and each rank's MFU (22% of the
    # fp16 peak), as `tracedoc diagnose DIR`.
    job = straggler_job(tmp_path / "straggler")
    diagnosis = td.diagnose(job, client=cluster.client)
    assert diagnosis.errors == []
    assert diagnosis == cli_diagnosis(str(job))
    assert diagnosis.findings["id"].tolist() == ["exposed_comm", "low_mfu", "straggler", "low_mfu"]
    assert diagnosis.trace["basis_ns"] == 182_617_362 and diagnosis.trace["steps"] == 24
    straggler = diagnosis.findings.set_index("id").loc["straggler"]
    assert straggler["figures"] == {"ranks": 2, "slowest_compute_ns": 167_228_855, "median_compute_ns": 139_444_781,
                                    "ratio": 1.1992}
    # The workers read the configuration by its path: here, no straggler rule.
    config = tmp_path / "all.toml"
    config.write_text("[diagnose]\nmin_savings_share = 0\nmin_savings_ns = 0\n[rules.straggler]\nenabled = false\n")
    everything = td.diagnose(job, config=config, client=cluster.client)
    assert everything == cli_diagnosis(str(job), "--config", str(config))
    # Every finding, however small, but the straggler's.
    assert "straggler" not in everything.trace["rules_run"]
    assert everything.findings["id"].tolist() == ["exposed_comm", "low_mfu", "low_mfu"]


def test_real_rank_directories_diagnose_as_the_cli(cluster, tmp_path):
    for relative in (TWO_RANKS, "kineto/kineto/tb_plugin/samples/resnet50_num_workers_4"):
        directory = shared_trace(relative)
        assert td.diagnose(directory, client=cluster.client) == cli_diagnosis(str(directory))
    # TraceLens's five H100 runs record no rank: the directory numbers them in file order, which a
    # run's settings file sorted first does not shift (the workers' first guess, redone).
    h100 = shared_trace("kineto/TraceLens/tests/traces/h100")
    job = tmp_path / "h100"
    job.mkdir()
    (job / "0_settings.json").write_text('{"learning_rate": 0.001}')
    for f in sorted(Path(h100).iterdir()):
        (job / f.name).symlink_to(f)
    diagnosis = td.diagnose(job, client=cluster.client)
    assert diagnosis.errors == []
    assert diagnosis == cli_diagnosis(str(job))
    assert diagnosis.findings["scope"].tolist()[:3] == ["rank 4 GPU 0 (NVIDIA H100 80GB HBM3)", "rank 4", "trace"]
    long_tail = diagnosis.findings.set_index("id").loc["long_tail"]  # across the five runs' kernels
    assert long_tail["figures"] == {"outlier_instances": 215, "kernels_with_outliers": 3, "excess_ns": 13_202_407}
    # One file is a trace of its own, named as `tracedoc diagnose FILE` names it.
    one = str(Path(h100) / "gaunernst_bert-small-uncased__1016001.json.gz")
    assert td.diagnose(one, client=cluster.client) == cli_diagnosis(one)


def cli_diff(base: str, new: str, *args: str) -> dict:
    run = cli("diff", "-f", "json", *args, base, new)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_two_jobs_diff_as_the_cli(cluster, tmp_path):
    # Every rank of both jobs read on the cluster: the steps' rank test over both jobs' steps, each
    # kernel's over its instances on every rank, each rank before and after, the findings that came.
    clean = clean_job(tmp_path / "clean")
    straggler = straggler_job(tmp_path / "straggler")
    report = td.diff(clean, straggler, client=cluster.client)
    assert report.errors == []
    assert report == cli_diff(str(clean), str(straggler))
    assert report["steps"]["verdict"] == "slower" and report["steps"]["median_change_pct"] == 43.7862
    assert [(f["status"], f["id"]) for f in report["findings"]] == [
        ("appeared", "exposed_comm"),
        ("appeared", "low_mfu"),
        ("appeared", "straggler"),
        ("appeared", "low_mfu"),
    ]
    assert report["ranks"]["new_compute_imbalance"] > 1.19
    # The other way round, without the diagnosis, at a stricter level.
    back = td.diff(straggler, clean, client=cluster.client, alpha=0.01, findings=False)
    assert back == cli_diff(str(straggler), str(clean), "--alpha", "0.01", "--no-findings")
    assert back["steps"]["verdict"] == "faster" and back["findings"] == []


def test_real_jobs_diff_as_the_cli(cluster):
    samples = "kineto/kineto/tb_plugin/samples"
    base, new = shared_trace(f"{samples}/resnet50_num_workers_0"), shared_trace(f"{samples}/resnet50_num_workers_4")
    assert td.diff(base, new, client=cluster.client) == cli_diff(str(base), str(new))


def test_a_corrupt_rank_leaves_the_job_summary_of_the_others(cluster, tmp_path):
    job = straggler_job(tmp_path / "job")
    (job / "job_rank2.json").write_text('{"traceEvents": [{"ph": "X", "name"')  # cut short
    summary = td.summarize(job, client=cluster.client)
    assert [Path(e.path).name for e in summary.errors] == ["job_rank2.json"]
    assert "job_rank2.json" in summary.errors[0].error
    # The CLI refuses the directory; without the corrupt file it gives the same summary.
    assert cli("summary", str(job)).returncode == 2
    diagnosis = td.diagnose(job, client=cluster.client)
    assert [Path(e.path).name for e in diagnosis.errors] == ["job_rank2.json"]
    (job / "job_rank2.json").unlink()
    assert summary == cli_summary(str(job))
    assert diagnosis == cli_diagnosis(str(job))


def test_sixty_four_ranks_through_a_cluster_losing_a_worker(tmp_path):
    # bench/scale_kineto's 64-rank job (HTA's NCCL trace as ranks 0..63, 625 MB): the summary
    # through the cluster equals the one process's (the sketched quantiles within their bound), with
    # a worker killed while it reads its ranks.
    sys.path.insert(0, str(HERE.parents[1] / "bench"))
    from rank_directory import build_rank_directory, tiler

    if not tiler().exists():
        pytest.skip(f"{tiler()} not built")
    shared_trace("kineto/HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz")
    directory = tmp_path / "ranks"
    build_rank_directory(directory, ranks=64, copies=1)
    own = Cluster(tmp_path, workers=2)  # its own: this test leaves it one worker short
    try:
        job = concurrent.futures.ThreadPoolExecutor(1).submit(td.summarize, directory, client=own.client)
        own.kill_busy_worker(0)
        assert not job.done()
        summary = job.result(timeout=600)
        assert own.workers_left() == 1
        diagnosis = td.diagnose(directory, client=own.client)
    finally:
        own.stop()
    assert summary.errors == []
    # Exact but for the top kernels' median and p95, merged from 64 ranks' sketches: each within
    # its rank error, under 1% of the instances.
    assert assert_summary_as_cli(summary, cli_summary(str(directory)), directory, 0.01) > 0
    assert len(summary.ranks) == 64 and summary.ranks["rank"].tolist() == list(range(64))
    one_rank = tracedoc.load(directory / "rank-0.pt.trace.json").summary().trace
    assert summary.trace["gpu_operations"] == 64 * one_rank["gpu_operations"]
    assert summary.trace["ranks"]["collectives_matched"] == 21  # each rank's 21 group collectives, matched on all 64
    assert diagnosis == cli_diagnosis(str(directory))


def test_each_rank_summary_is_the_cli_summary_of_its_file(cluster):
    directory = shared_trace(TWO_RANKS)
    files = td.rank_files(directory)
    assert [Path(f).name for f in files] == ["sampled_rank-0.json.gz", "sampled_rank-1.json.gz"]
    results = td.rank_summaries(directory, client=cluster.client)
    assert [r.path for r in results] == files
    for result in results:
        assert result.error is None
        assert isinstance(result.value, tracedoc.Summary)
        assert result.value == cli_summary(result.path)
    # The per-rank figures of `tracedoc summary DIR`: each rank's GPUs as its own file gives them.
    merged = tracedoc.load(directory).summary()
    ranks = [r.value.devices.assign(rank=i) for i, r in enumerate(results)]
    for rank, own in enumerate(ranks):
        rows = merged.devices[merged.devices["rank"] == rank]
        assert len(rows) == len(own) > 0
        for column in ("device", "busy_ns", "kernels", "kernel_ns", "memcpys", "compute_ns", "longest_gap_ns"):
            assert rows[column].tolist() == own[column].tolist(), column


def test_a_corrupt_rank_file_is_named_and_the_others_intact(cluster, tmp_path):
    files = td.rank_files(shared_trace(SIX_FILES))
    corrupt = tmp_path / "rank-7.json.gz"
    corrupt.write_bytes(Path(files[0]).read_bytes()[:5000])  # cut in the middle of the gzip stream
    results = td.map_ranks(lambda t: t.row_counts()["kernels"], [*files, corrupt], client=cluster.client)
    assert results[-1].value is None and "rank-7.json.gz" in results[-1].error
    for result in results[:-1]:
        assert result.error is None
        assert result.value == tracedoc.load(result.path).row_counts()["kernels"] > 0


def test_a_worker_killed_in_the_middle_changes_nothing(cluster):
    from cluster_tasks import slow_kernel_count

    files = td.rank_files(shared_trace(SIX_FILES))
    expected = [tracedoc.load(f).row_counts()["kernels"] for f in files]
    futures = cluster.client.map(td._run_rank, files, function=slow_kernel_count, load_options={}, pure=False)
    cluster.kill_busy_worker(0)
    results = cluster.client.gather(futures)
    assert [r.value for r in results] == expected
    # The survivor ran everything: the job finished on one worker.
    assert cluster.workers_left() == 1


def test_local_cluster_without_a_client():
    directory = shared_trace(TWO_RANKS)
    results = td.map_ranks(lambda t: t.format, directory)
    assert [r.value for r in results] == ["kineto-json", "kineto-json"]
