#!/usr/bin/env python3
"""Independent reference values for tracedoc's `op_dispatch_sum` report (framework dispatch overhead).

tests/pytorch_report_test.cpp compares every row of `op_dispatch_sum` on the traces below, cell by
cell, with the table this script writes (tests/golden/pytorch/op_dispatch_sum.tsv). Operator nesting
and the operator of each call come from op_kernel_reference.py's walk (shared with that reference,
not with tracedoc); the rest is plain Python over the raw JSON.

Usage (standard library only):
    python3 tests/kineto/dispatch_reference.py [SHARED_DIR]

Definitions (src/analysis/pytorch/dispatch_overhead.h; keep the two in step), per operator instance:
- CPU self: duration minus the durations of its direct children, at least 0.
- CUDA API: the union of the calls (cuda_runtime, cuda_driver, Runtime) whose innermost operator it
  is, each clipped to the operator's [start, end]; at most CPU self.
- Framework: CPU self - CUDA API.
- GPU self: the durations of the kernels, copies and memsets (joined to their call by correlation)
  launched by those calls; Kernels: how many of them are kernels.
Per operator name the sums, and Calls. Rows by framework time descending, then name.
"""

import os
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import op_kernel_reference as okr  # noqa: E402  (this folder's module)

CHECKOUT = os.path.dirname(os.path.dirname(HERE))
OUT_PATH = os.path.join(CHECKOUT, "tests", "golden", "pytorch", "op_dispatch_sum.tsv")

TRACES = [
    ("resnet50_e1", "kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"),
    ("bert_small_h100", "kineto/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"),
    ("resnet_act_checkpoint_mi300", "kineto/TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz"),
    ("vllm_graph_execution", "kineto/TraceLens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz"),
    ("alexnet_a100", "kineto/HolisticTraceAnalysis/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"),
]

GPU_CATS = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"}
COLUMNS = ["trace", "operator", "calls", "framework_ns", "cpu_self_ns", "cuda_api_ns", "gpu_self_ns", "kernels"]


class Trace(okr.Trace):
    GPU_CATS = GPU_CATS


def calls_of(path):
    """Every API call of the trace (op_kernel_reference keeps only those with a correlation id)."""
    doc = okr.load(path)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    out = []
    for i, e in enumerate(events):
        if not isinstance(e, dict) or e.get("ph") != "X" or "ts" not in e or e.get("cat") not in okr.API_CATS:
            continue
        s = okr.to_ns(e["ts"])
        dur = okr.to_ns(e["dur"]) if isinstance(e.get("dur"), (int, okr.Decimal)) else 0
        dur = max(dur, 0)
        if dur > okr.WEEK_NS:
            continue
        out.append(dict(i=i, s=s, e=s + dur, th=(okr.ident(e.get("pid")), okr.ident(e.get("tid"))),
                        corr=e.get("args", {}).get("correlation")))
    return out


def rows_for(t, calls):
    children = defaultdict(int)
    for o in t.ops:
        if o["parent"] is not None:
            children[id(o["parent"])] += o["e"] - o["s"]
    pieces = defaultdict(list)  # id(op) -> clipped call intervals
    for c in calls:
        op = t.innermost(c)
        if op is None:
            continue
        lo, hi = max(c["s"], op["s"]), min(c["e"], op["e"])
        if hi > lo:
            pieces[id(op)].append((lo, hi))
    gpu = defaultdict(int)
    kernels = defaultdict(int)
    for k in t.kernels:
        call = t.call_of.get(k["corr"]) if k["corr"] is not None else None
        if call is None:
            continue
        op = t.innermost(call)
        if op is None:
            continue
        gpu[id(op)] += k["e"] - k["s"]
        if k["cat"] in ("kernel", "Kernel"):
            kernels[id(op)] += 1
    groups = {}
    for o in t.ops:
        self_time = max(0, o["e"] - o["s"] - children[id(o)])
        union, end = 0, None
        for lo, hi in sorted(pieces[id(o)]):
            if end is not None and lo < end:
                lo = end
            if hi > lo:
                union += hi - lo
                end = hi
        api = min(union, self_time)
        g = groups.setdefault(o["name"], [0, 0, 0, 0, 0, 0])  # calls, framework, self, api, gpu, kernels
        g[0] += 1
        g[1] += self_time - api
        g[2] += self_time
        g[3] += api
        g[4] += gpu[id(o)]
        g[5] += kernels[id(o)]
    rows = [[name] + g for name, g in groups.items()]
    rows.sort(key=lambda r: (-r[2], r[0]))
    return rows


def main():
    traces = os.path.join(okr.shared_dir(), "traces")
    if not os.path.isdir(traces):
        raise SystemExit("no traces under %s" % traces)
    rows_out = []
    for name, rel in TRACES:
        path = os.path.join(traces, rel)
        t = Trace(path)
        rows = rows_for(t, calls_of(path))
        rows_out.extend([name] + r for r in rows)
        print("%-28s %4d operators" % (name, len(rows)), file=sys.stderr)
    okr._reference.write_reference_tsv(OUT_PATH, "dispatch_reference.py", TRACES, COLUMNS, rows_out)

if __name__ == "__main__":
    main()
