"""HTA's side of the PyTorch-trace benchmarks (bench/kineto_vs_hta, bench/python_vs_cli.py): loads one
trace with Holistic Trace Analysis and runs its kernel breakdown; prints its own load and breakdown
times (the process time also counts importing pandas) and the kernel time sum for the cross-check.

  HTA_PYTHON bench/hta_kernel_breakdown.py TRACE.json
"""
import os
import sys
import time
from importlib.metadata import version

from hta.trace_analysis import TraceAnalysis

p = os.path.abspath(sys.argv[1])
t0 = time.perf_counter()
a = TraceAnalysis(trace_files={0: p}, trace_dir=os.path.dirname(p))
t1 = time.perf_counter()
by_type, by_kernel = a.get_gpu_kernel_breakdown(visualize=False)
t2 = time.perf_counter()
print("version", version("HolisticTraceAnalysis"))
print("load_s", t1 - t0)
print("breakdown_s", t2 - t1)
print("compute_us", by_type.loc[by_type["kernel_type"] != "MEMORY", "sum"].sum())
