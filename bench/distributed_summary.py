#!/usr/bin/env python3
"""Benchmark: a job's summary (or diagnosis, --command diagnose) through a Dask cluster
(tracedoc.distributed.summarize / diagnose) against `tracedoc summary DIR` (diagnose DIR) in one process, on a rank directory tiled from a real trace
(bench/rank_directory.py: --ranks files of HTA's NCCL trace tiled --rank-copies times; the defaults,
64 ranks x 10 copies, make 64 files of ~98 MB, 6.3 GB), all measured in this run on this machine.

  cluster   a LocalCluster of --workers worker processes (one thread each; tracedoc's own pool uses
            the worker's cores), tracedoc.distributed.summarize(DIR): wall time, each worker's peak
            RSS (a worker holds one rank at a time), throughput per worker
  one       `tracedoc summary -f json DIR` in one process: wall time and peak RSS (from wait4)
  (--command diagnose: tracedoc.distributed.diagnose and `tracedoc diagnose -f json DIR` the same way)

Both results must be equal (every figure exact). Then it extrapolates from the measured per-worker
throughput what a job of 1,024 ranks of 1 GB needs on N workers. Run it with the Python that has
the package and dask[distributed] installed (scripts/test-python.sh's .venv):

  .venv/bin/python bench/distributed_summary.py [--ranks 64] [--rank-copies 10] [--workers W]
                                                [--command summary|diagnose] [--workdir DIR] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rank_directory import CHECKOUT, NCCL_TRACE, build_rank_directory, tiler

CLI = CHECKOUT / os.environ.get("BUILD_DIR", "build") / "tracedoc"


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run_cli(command: str, directory: Path) -> tuple[float, float, dict]:
    """`tracedoc COMMAND -f json DIR`: wall seconds, peak RSS in MB (wait4) and the document."""
    began = time.perf_counter()
    process = subprocess.Popen([str(CLI), command, "-f", "json", str(directory)], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - began
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"tracedoc {command} {directory} failed")
    return wall, usage.ru_maxrss / 1024.0, json.loads(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--rank-copies", type=int, default=10)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--command", choices=("summary", "diagnose"), default="summary")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "tracedoc-distributed")
    parser.add_argument("--keep", action="store_true", help="keep the rank files for the next run")
    args = parser.parse_args()
    for need in (tiler(), CLI, NCCL_TRACE):
        if not need.exists():
            sys.exit(f"{need} not found (build with scripts/build.sh; ../shared holds the traces)")

    import tracedoc.distributed as td
    from dask.distributed import Client, LocalCluster

    directory = args.workdir / f"ranks-{args.ranks}x{args.rank_copies}"
    began = time.perf_counter()
    size = build_rank_directory(directory, args.ranks, args.rank_copies)
    print(f"{args.ranks} rank files of {size / args.ranks / 1e6:.0f} MB ({size / 1e9:.2f} GB), "
          f"HTA's NCCL trace tiled {args.rank_copies}x each ({time.perf_counter() - began:.0f} s to make or find)")

    # One process first: it also puts the files in the page cache for the cluster's run.
    run_cli(args.command, directory)
    one_wall, one_rss, one = min(run_cli(args.command, directory), run_cli(args.command, directory),
                                 key=lambda r: r[0])
    through_cluster = td.summarize if args.command == "summary" else td.diagnose

    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                           memory_limit=0)
    client = Client(cluster)
    try:
        client.run(lambda: __import__("tracedoc"))  # imported before the clock starts, as a warm cluster has it
        idle_rss = max(client.run(peak_rss_mb).values())  # a worker before it reads any rank
        began = time.perf_counter()
        job = through_cluster(directory, client=client)
        wall = time.perf_counter() - began
        worker_rss = sorted(client.run(peak_rss_mb).values())
    finally:
        client.close()
        cluster.close()

    equal = dict(job) == one
    per_worker = size / wall / args.workers
    print(f"\n{'':10} {'wall s':>8} {'GB/s':>7} {'peak RSS MB':>12}")
    print(f"{'one':10} {one_wall:8.2f} {size / one_wall / 1e9:7.2f} {one_rss:12.0f}   tracedoc {args.command} DIR")
    print(f"{'cluster':10} {wall:8.2f} {size / wall / 1e9:7.2f} {max(worker_rss):12.0f}   per worker (max of "
          f"{args.workers}; min {min(worker_rss):.0f}), {args.workers} workers x 1 thread")
    print(f"\nsame {args.command}: {'yes, every figure' if equal else 'NO'}; rank errors: {len(job.errors)}")
    print(f"cluster / one process: {wall / one_wall:.2f}x the time; worker peak RSS / one process: "
          f"{max(worker_rss) / one_rss:.2f}x, / one rank file: {max(worker_rss) * 1e6 / (size / args.ranks):.2f}x")
    # What reading a rank added to a worker (its interpreter, Dask and tracedoc took idle_rss before).
    per_rank_gb = (max(worker_rss) - idle_rss) * 1e6 / (size / args.ranks)
    print(f"throughput per worker: {per_worker / 1e6:.0f} MB/s; a worker: {idle_rss:.0f} MB idle, "
          f"+{max(worker_rss) - idle_rss:.0f} MB reading a {size / args.ranks / 1e6:.0f} MB rank "
          f"({per_rank_gb:.2f} MB per MB of trace)")
    job_bytes = 1024 * 1e9
    for n in (8, 64, 256):
        print(f"  1,024 ranks x 1 GB on {n:3} such workers: ~{job_bytes / (per_worker * n) / 60:.1f} min, "
              f"each worker peaking near {(idle_rss + per_rank_gb * 1e3) / 1e3:.1f} GB")
    if not args.keep:
        shutil.rmtree(directory, ignore_errors=True)
        for f in args.workdir.glob(directory.name + ".*.complete"):
            f.unlink()
    if not equal:
        sys.exit(1)


if __name__ == "__main__":
    main()
