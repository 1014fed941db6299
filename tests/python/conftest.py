"""Shared fixtures of the Python package's tests: the real traces of ../shared (tests skip, saying
so, when that folder is absent) and the `tracedoc` command line of the C++ build, whose outputs
the package must reproduce."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("TRACEDOC_SHARED", CHECKOUT.parent / "shared"))
TRACES = SHARED / "traces"
CLI = Path(os.environ.get("TRACEDOC_CLI", CHECKOUT / os.environ.get("BUILD_DIR", "build") / "tracedoc"))

# Real traces of each kind: an nsys export of a 2-GPU training run, a PyTorch profiler trace
# (TensorBoard plugin sample, CUDA), and a rank directory of two real traces.
NSYS_EXPORT = "nsys/nsys-ai/mfu_2gpu_before.sqlite"
KINETO_TRACE = "kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
RANK_DIRECTORY = "kineto/kineto/tb_plugin/samples/resnet50_num_workers_4"


def shared_trace(relative: str) -> Path:
    path = TRACES / relative
    if not path.exists():
        pytest.skip(f"shared traces absent: {path} not found (tests on real traces need ../shared)")
    return path


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """Runs the C++ build's `tracedoc`; skips when it is not built."""
    if not CLI.exists():
        pytest.skip(f"{CLI} not built (bash scripts/build.sh, or set TRACEDOC_CLI)")
    return subprocess.run([str(CLI), *args], capture_output=True, text=True, check=False)


@pytest.fixture(scope="session")
def nsys_path() -> Path:
    return shared_trace(NSYS_EXPORT)


@pytest.fixture(scope="session")
def kineto_path() -> Path:
    return shared_trace(KINETO_TRACE)


@pytest.fixture(scope="session")
def nsys_trace(nsys_path):
    import tracedoc

    return tracedoc.load(nsys_path)


@pytest.fixture(scope="session")
def kineto_trace(kineto_path):
    import tracedoc

    return tracedoc.load(kineto_path)
