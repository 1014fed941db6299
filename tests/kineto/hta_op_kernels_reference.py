#!/usr/bin/env python3
"""Holistic Trace Analysis's get_aten_op_kernels_and_delay counts, for `op_kernel_sum:aten`.

tests/op_kernel_sum_test.cpp (OpKernelSumHta) charges every kernel of the traces below to the
deepest aten:: operator holding its launch on the launching thread, as `op_kernel_sum:aten` does,
and compares the count per (operator, kernel) with what HTA itself printed, written here to
tests/golden/hta/aten_op_kernels.tsv (the C++ test needs neither Python nor HTA).

HTA's table has one row per (aten op, sequence of kernels one call of it launched) with the number of
such calls; this script turns it into kernels per (op, kernel): each kernel of a sequence counts
once per call. To compare like with like, the C++ side takes HTA's inputs: kernels launched by calls
named like HTA's KERNEL_LAUNCH_CATEGORY_PATTERN (cuda*LaunchKernel*, cuLaunchKernel*, runFunction*),
and, as HTA's default TraceAnalysis drops the last ProfilerStep when there are two or more, only
launches that start before the last step. What remains different by design (thread check, every
launch kind, no dropped step, delays from the call's end) is documented in
src/analysis/pytorch/op_kernel_sum.cpp.

Traces on which HTA fails are recorded as a comment line (HTA 0.5.0 raises KeyError 'thread_id'
when no launch of its kinds has an aten op: CUDA-graph replays, AMD traces with hipLaunchKernel).

Usage (needs HTA, e.g. `python3 -m venv VENV && VENV/bin/pip install HolisticTraceAnalysis`):
    VENV/bin/python tests/kineto/hta_op_kernels_reference.py [SHARED_DIR]
SHARED_DIR defaults to $TRACEDOC_SHARED, else ../shared next to the checkout. Output path fixed,
relative to this script.
"""

import collections
import gzip
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(os.path.dirname(HERE))
OUT_PATH = os.path.join(CHECKOUT, "tests", "golden", "hta", "aten_op_kernels.tsv")
sys.path.insert(0, HERE)
import reference as _reference  # noqa: E402  (this folder's module)

TRACES = [
    # E1 (2021), V100, forward on the main thread, backward on a second one; 6 steps (HTA drops 1)
    ("resnet50_e1", "kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"),
    # E2 (2022), A100, NCCL, autograd thread; 7 steps
    ("trace_diff_control", "kineto/HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz"),
    # E5, H100, one step
    ("bert_small_h100", "kineto/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"),
    # E5, one cudaGraphLaunch: HTA sees no launch of its kinds and fails
    ("vllm_graph_execution", "kineto/TraceLens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz"),
]


# The shared folder, as every reference script of this folder finds it.
shared_dir = _reference.shared_dir


def kernel_names(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        doc = json.loads(f.read().decode("utf-8", errors="replace"), strict=False)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return {e.get("name") for e in events if isinstance(e, dict) and e.get("cat") in ("kernel", "Kernel")}


def main():
    os.environ.pop("HTA_DISABLE_NS_ROUNDING", None)
    import logging
    import warnings
    logging.getLogger("hta").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")
    from hta_breakdowns_reference import hta_version, load  # stock TraceAnalysis (+ its pandas-3 shim)

    traces = os.path.join(shared_dir(), "traces")
    if not os.path.isdir(traces):
        raise SystemExit("no traces under %s" % traces)
    rows, notes = [], []
    for name, rel in TRACES:
        t0 = time.perf_counter()
        analysis, _ = load([rel], traces)
        try:
            table = analysis.get_aten_op_kernels_and_delay(ranks=[0])[0]
        except Exception as e:  # noqa: BLE001 - HTA's own failure is the finding
            notes.append("# %s: HTA fails: %s %s" % (name, type(e).__name__, str(e)[:60]))
            print("%7.1f s  %s: HTA fails" % (time.perf_counter() - t0, name), file=sys.stderr)
            continue
        known = kernel_names(os.path.join(traces, rel))
        counts = collections.Counter()
        for r in table.to_dict("records"):
            for kernel in r["kernel_sequence"].split(" -> "):
                if kernel not in known:
                    raise SystemExit("%s: cannot split HTA's kernel sequence (a name holds ' -> '?): %r" % (name, kernel))
                counts[(r["aten_op_name"], kernel)] += int(r["occurrence_count"])
        for (op, kernel), n in sorted(counts.items()):
            if "\t" in op + kernel or "\n" in op + kernel:
                raise SystemExit("a name holds a tab or line break")
            rows.append((name, op, kernel, n))
        notes.append("# %s: %d HTA rows, %d kernels" % (name, len(table), sum(counts.values())))
        print("%7.1f s  %s" % (time.perf_counter() - t0, name), file=sys.stderr)

    import pandas
    os.makedirs(os.path.dirname(OUT_PATH), exist_ok=True)
    with open(OUT_PATH, "w", encoding="utf-8", newline="\n") as out:
        out.write("# generated by tests/kineto/hta_op_kernels_reference.py with HolisticTraceAnalysis %s (pandas %s)\n"
                  % (hta_version(), pandas.__version__))
        out.write("# regenerate: <venv with HTA>/bin/python tests/kineto/hta_op_kernels_reference.py [SHARED_DIR]\n")
        for name, rel in TRACES:
            out.write("# %s = %s\n" % (name, rel))
        for note in notes:
            out.write(note + "\n")
        out.write("trace\toperator\tkernel\tkernels\n")
        for r in rows:
            out.write("\t".join(str(x) for x in r) + "\n")
    print("wrote %d rows to %s" % (len(rows), os.path.relpath(OUT_PATH, CHECKOUT)), file=sys.stderr)


if __name__ == "__main__":
    main()
