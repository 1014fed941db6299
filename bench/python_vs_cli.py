#!/usr/bin/env python3
"""Benchmark: the Python package against the CLI and against HTA on a ~1 GB PyTorch profiler trace
made by tiling a real one (bench/tile_kineto_trace), all measured in this run on this machine.

  python  tracedoc.load + t.table("kernels").to_pandas() + the kernel breakdown
          (t.report("kernel_type_breakdown") and t.report("cuda_gpu_kern_sum")), timed inside the
          interpreter once pandas, pyarrow and tracedoc are imported (as in a notebook); the whole
          process, interpreter start and imports included, is printed beside it
  cli     tracedoc stats -r kernel_type_breakdown,cuda_gpu_kern_sum -f csv (the same read and reports)
  hta     HTA's TraceAnalysis load + get_gpu_kernel_breakdown (its Python from --hta-python or
          $TRACEDOC_HTA_PYTHON: a venv with `pip install HolisticTraceAnalysis`; skipped without one)

Each runs in its own process (wall time, CPU time and that process's peak RSS from wait4), best of
--runs after a warm-up run that puts the file in the page cache. Prints the ratios and the goals:
the Python path within 1.1x of the CLI; at least 30x faster than HTA with at most 0.2x its peak
memory. Run it with the Python that has the package installed (scripts/test-python.sh's .venv):

  .venv/bin/python bench/python_vs_cli.py [--input TRACE.json(.gz)] [--copies N] [--runs R]
                                          [--hta-python PY] [--hta-copies K] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
BUILD = CHECKOUT / os.environ.get("BUILD_DIR", "build")
SHARED = Path(os.environ.get("TRACEDOC_SHARED", CHECKOUT.parent / "shared"))
DEFAULT_INPUT = SHARED / "traces/kineto/TraceLens/tests/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz"

PYTHON_PATH = r"""
import sys, time
t_start = time.perf_counter()
import pandas, pyarrow, tracedoc  # what a notebook has imported before its first load
t0 = time.perf_counter()
t = tracedoc.load(sys.argv[1])
t1 = time.perf_counter()
kernels = t.table("kernels").to_pandas()
types = t.report("kernel_type_breakdown")
per_kernel = t.report("cuda_gpu_kern_sum")
t2 = time.perf_counter()
print("import_s", t0 - t_start)
print("load_s", t1 - t0)
print("tables_s", t2 - t1)
print("kernels", len(kernels))
print("kernel_ns", int(per_kernel["Total Time (ns)"].sum()))
"""

HTA = CHECKOUT / "bench" / "hta_kernel_breakdown.py"  # shared with bench/kineto_vs_hta


class Run:
    def __init__(self, seconds: float, cpu: float, rss_mb: float, out: str) -> None:
        self.seconds, self.cpu, self.rss_mb, self.out = seconds, cpu, rss_mb, out

    def fields(self) -> dict[str, str]:
        return dict(line.split(" ", 1) for line in self.out.splitlines() if " " in line)


def run(argv: list[str], env: dict[str, str] | None = None) -> Run:
    """One process: its wall time, CPU time and peak RSS (wait4 reports that child's alone)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        if child.returncode != 0:
            sys.exit(f"python_vs_cli: {' '.join(argv[:3])} ... failed ({child.returncode}):\n{err.read()}")
        return Run(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0, out.read())


def best_of(runs: int, argv: list[str]) -> Run:
    run(argv)  # warm-up: every timed run finds the file in the page cache
    return min((run(argv) for _ in range(runs)), key=lambda r: r.seconds)


def tiled(source: Path, copies: int, workdir: Path) -> Path:
    """The tiled trace, made once and kept in workdir (kineto_vs_hta's files are reused)."""
    stem = source.name.split(".json")[0]
    path = workdir / f"{stem}.x{copies}.json"
    if not path.exists():
        workdir.mkdir(parents=True, exist_ok=True)
        tiler = BUILD / "bench" / "tile_kineto_trace"
        subprocess.run([str(tiler), str(source), str(path) + ".tmp", str(copies)], check=True, capture_output=True)
        os.replace(str(path) + ".tmp", path)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", type=Path, default=DEFAULT_INPUT)
    parser.add_argument("--copies", type=int, default=18, help="tiles of the input (18: ~1 GB of JSON)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--hta-python", default=os.environ.get("TRACEDOC_HTA_PYTHON", ""))
    parser.add_argument("--hta-copies", type=int, default=0, help="HTA on a smaller tiling (default: the same)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "tracedoc-kineto-bench")
    args = parser.parse_args()
    if not args.input.exists():
        print(f"python_vs_cli: {args.input} not found (pass --input)", file=sys.stderr)
        return 2
    big = tiled(args.input, args.copies, args.workdir)
    mb = big.stat().st_size / 1e6
    print(f"input: {big} ({mb:.0f} MB of JSON)")

    py = best_of(args.runs, [sys.executable, "-c", PYTHON_PATH, str(big)])
    facts = py.fields()
    with tempfile.TemporaryDirectory() as out:
        cli_argv = [str(BUILD / "tracedoc"), "stats", "-r", "kernel_type_breakdown,cuda_gpu_kern_sum", "-f", "csv"]
        cli = best_of(args.runs, [*cli_argv, "-o", os.path.join(out, "td"), str(big)])
    work = float(facts["load_s"]) + float(facts["tables_s"])
    print(f"python  load + kernels.to_pandas() + breakdown: {work:.2f} s (load {float(facts['load_s']):.2f} s, "
          f"tables and reports {float(facts['tables_s']):.2f} s; {facts['kernels']} kernels); the process "
          f"{py.seconds:.2f} s wall with {float(facts['import_s']):.2f} s of imports, {py.cpu:.2f} CPU-s, "
          f"peak RSS {py.rss_mb:.0f} MB")
    print(f"cli     tracedoc stats, same reports:           {cli.seconds:.2f} s wall, {cli.cpu:.2f} CPU-s, "
          f"peak RSS {cli.rss_mb:.0f} MB")
    ratio = work / cli.seconds
    print(f"python / cli: {ratio:.2f}x the CLI's time  [goal <= 1.1x: {'met' if ratio <= 1.1 else 'NOT met'}]; "
          f"with interpreter start and imports {py.seconds / cli.seconds:.2f}x")

    if not args.hta_python:
        print("hta: not run (pass --hta-python or set TRACEDOC_HTA_PYTHON to a venv's python with "
              "HolisticTraceAnalysis installed)")
        return 0
    small = big if args.hta_copies in (0, args.copies) else tiled(args.input, args.hta_copies, args.workdir)
    small_mb = small.stat().st_size / 1e6
    hta = run([args.hta_python, str(HTA), str(small)])  # minutes per run: one run
    hta_facts = hta.fields()
    scale = mb / small_mb  # per-MB rates when HTA ran on a smaller tiling
    hta_seconds, hta_rss = hta.seconds * scale, hta.rss_mb * scale
    note = "" if small == big else f" (measured on {small_mb:.0f} MB, scaled to {mb:.0f} MB)"
    print(f"hta {hta_facts.get('version', '?')}  load + get_gpu_kernel_breakdown: {hta_seconds:.1f} s wall, "
          f"peak RSS {hta_rss:.0f} MB{note}")
    speed, memory = hta_seconds / py.seconds, py.rss_mb / hta_rss  # whole processes on both sides
    print(f"python vs hta: {speed:.1f}x faster [goal >= 30x: {'met' if speed >= 30 else 'NOT met'}], "
          f"{memory:.2f}x its peak memory [goal <= 0.2x: {'met' if memory <= 0.2 else 'NOT met'}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
