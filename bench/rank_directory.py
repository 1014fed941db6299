"""A training job's rank directory made from a real PyTorch profiler trace, as bench/scale_kineto's
part 2 makes it: rank-<R>.pt.trace.json for R in 0..ranks-1, each the input tiled `copies` times by
bench/tile_kineto_trace with distributedInfo.rank = R. Shared by bench/distributed_summary.py and
the cluster tests (tests/python/test_distributed.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TRACEDOC_SHARED", CHECKOUT.parent / "shared"))
# HTA's NCCL test trace: 2,700 kernels (15 all-reduces), 3 steps, 9.8 MB of JSON.
NCCL_TRACE = SHARED / "traces/kineto/HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz"


def tiler() -> Path:
    return CHECKOUT / os.environ.get("BUILD_DIR", "build") / "bench" / "tile_kineto_trace"


def build_rank_directory(directory: Path, ranks: int, copies: int, source: Path = NCCL_TRACE) -> int:
    """Writes the rank files into `directory` (kept when a previous call completed it: a `.complete`
    file beside them says so) and returns their total size in bytes."""
    directory.mkdir(parents=True, exist_ok=True)
    files = [directory / f"rank-{r}.pt.trace.json" for r in range(ranks)]
    done = directory.with_name(directory.name + f".{ranks}x{copies}.complete")
    if not done.exists():
        for r, f in enumerate(files):
            subprocess.run([str(tiler()), "--rank", str(r), str(source), str(f), str(copies)], check=True,
                           stdout=subprocess.DEVNULL)
        done.write_text("")
    return sum(f.stat().st_size for f in files)
