"""Functions the cluster tests send to Dask workers (importable there: the test cluster's workers
have this folder on their PYTHONPATH)."""

from __future__ import annotations

import time


def slow_kernel_count(trace) -> int:
    """A rank's kernel count, after a pause long enough to kill a worker in the middle of it."""
    time.sleep(1.5)
    return trace.row_counts()["kernels"]
