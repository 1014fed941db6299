#!/usr/bin/env python3
"""Independent reference values for tracedoc's `op_kernel_sum` report (operator -> kernel mapping).

tests/op_kernel_sum_test.cpp runs `op_kernel_sum`, `op_kernel_sum:aten` and `op_kernel_sum:top` on
the traces below and compares every row, cell by cell, with the table this script writes
(tests/golden/pytorch/op_kernel_sum.tsv). This side reads the raw JSON with Python's json module and
exact decimals and shares no code with tracedoc: it nests operators with its own walk, finds each
launch's operator by walking up from the last operator that started before the call, and
aggregates with plain Python.

Usage (standard library only; from anywhere):
    python3 tests/kineto/op_kernel_reference.py [SHARED_DIR]
SHARED_DIR defaults to $TRACEDOC_SHARED, else ../shared next to the checkout (as the C++ tests do).
The output path is fixed, relative to this script, so the committed file never names a machine path.

Definitions (the report's, src/analysis/pytorch/op_kernel_sum.h; keep the two in step):
- Operators: `cpu_op` events; in 2021 traces (`Operator` category) the events without '#' in the
  name ('#' marks record_function ranges such as ProfilerStep#5). Launch calls: `cuda_runtime`,
  `cuda_driver`, `Runtime`. Kernels: `kernel`, `Kernel`, joined to their call by args.correlation.
- Times: ts and dur (µs, integer or "us.nnn") to exact ns, each rounded half away from zero; end =
  start + dur; negative dur reads as 0; events without ts or longer than a week are dropped.
- Nesting per (pid, tid): operators in (start, end descending, file order); an operator is inside
  the nearest open one that holds it: it ends no later, or, in traces with integer-µs times, it
  starts before that one's end and ends at most 1 µs after it (truncation).
- A launch belongs to the deepest operator on its thread whose [start, end] holds the call's start:
  the last operator (in that order) that started no later than the call, or its nearest ancestor
  that has not ended before the call. `aten` view: the nearest aten:: ancestor-or-self of that
  operator; `top` view: its root. Kernels whose call is not in the trace are left out.
- Per (operator name, kernel name): kernels, their summed duration, op -> launch delay (call start -
  operator start), launch -> kernel delay (kernel start - call end, at least 0) with its median (the
  mean of the two middle values for an even count).
- Threads: the launching threads by kernels launched (then by pid, tid), named by their last
  thread_name metadata (else "tid N"), " [autograd]" after a thread whose name contains pt_autograd
  or whose root operators with a "Fwd thread id" are more often backward (> 0) than forward (0); at
  most four, then "; +N more".
"""

import bisect
import gzip
import json
import os
import sys
from collections import defaultdict
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference as _reference  # noqa: E402  (this folder's module)
CHECKOUT = os.path.dirname(os.path.dirname(HERE))
OUT_PATH = os.path.join(CHECKOUT, "tests", "golden", "pytorch", "op_kernel_sum.tsv")

# (name used by the C++ test, path under SHARED/traces). Small traces of different eras and vendors.
TRACES = [
    # E1 (2021, `Operator` category, integer µs), V100: backward on a second thread named "python"
    ("resnet50_e1", "kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"),
    # E2 (2022, integer µs), A100, NCCL kernels, autograd thread
    ("trace_diff_control", "kineto/HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz"),
    # E5, H100, one thread
    ("bert_small_h100", "kineto/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"),
    # E5, AMD MI300X, hipLaunchKernel, activation checkpointing on "pt_autograd_0"
    ("resnet_act_checkpoint_mi300", "kineto/TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz"),
    # E5, CUDA graph replay: one cudaGraphLaunch, many kernels
    ("vllm_graph_execution", "kineto/TraceLens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz"),
]
VIEWS = ["innermost", "aten", "top"]

OP_CATS = {"cpu_op"}
OP_2021_CATS = {"Operator"}
API_CATS = {"cuda_runtime", "cuda_driver", "Runtime"}
KERNEL_CATS = {"kernel", "Kernel"}
CAPITALIZED = {"Operator", "Runtime", "Kernel", "Memcpy", "Memset"}
WEEK_NS = 7 * 24 * 3600 * 10**9
MAX_THREADS = 4
NULL = "\\N"

# The shared folder and exact µs -> ns, as every reference script of this folder has them.
shared_dir = _reference.shared_dir
to_ns = _reference.to_ns


def ident(v):
    """pid / tid as an int where it is one (E1 writes them as strings)."""
    try:
        return int(v)
    except (TypeError, ValueError):
        return str(v)


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        doc = json.loads(f.read().decode("utf-8", errors="replace"), parse_float=Decimal, strict=False)
    return doc


class Trace:
    # The GPU activity kept (self.kernels, each with its cat); a subclass may keep copies and memsets too.
    GPU_CATS = KERNEL_CATS

    def __init__(self, path):
        doc = load(path)
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        cats = {e.get("cat") for e in events if isinstance(e, dict)}
        fractional = any(isinstance(e.get("ts"), Decimal) for e in events if isinstance(e, dict) and e.get("ph") == "X")
        ns_exact = not (cats & CAPITALIZED) and (
            (isinstance(doc, dict) and "baseTimeNanoseconds" in doc) or fractional)
        self.slack = 0 if ns_exact else 1000
        self.thread_names = {}
        self.ops = []        # dicts: i, name, s, e, th, fwd
        calls = []
        self.kernels = []
        for i, e in enumerate(events):
            if not isinstance(e, dict):
                continue
            ph, cat = e.get("ph"), e.get("cat")
            if ph == "M" and e.get("name") == "thread_name":
                self.thread_names[(ident(e.get("pid")), ident(e.get("tid")))] = e.get("args", {}).get("name")
                continue
            if ph != "X" or "ts" not in e:
                continue
            name = e.get("name", "")
            is_op = cat in OP_CATS or (cat in OP_2021_CATS and "#" not in name)
            if not (is_op or cat in API_CATS or cat in self.GPU_CATS):
                continue
            s = to_ns(e["ts"])
            dur = to_ns(e["dur"]) if isinstance(e.get("dur"), (int, Decimal)) else 0
            dur = max(dur, 0)
            if dur > WEEK_NS:
                continue
            args = e.get("args", {})
            th = (ident(e.get("pid")), ident(e.get("tid")))
            if is_op:
                fwd = args.get("Fwd thread id")
                self.ops.append(dict(i=i, name=name, s=s, e=s + dur, th=th, fwd=fwd if isinstance(fwd, int) else None))
            elif cat in API_CATS:
                calls.append(dict(i=i, s=s, e=s + dur, th=th, corr=args.get("correlation")))
            else:
                self.kernels.append(dict(i=i, name=name, s=s, e=s + dur, corr=args.get("correlation"), cat=cat))
        calls.sort(key=lambda c: (c["s"], c["i"]))
        self.call_of = {}
        for c in calls:
            if c["corr"] is not None:
                self.call_of.setdefault(c["corr"], c)  # the earliest call with the id
        self.nest()

    def inside(self, c, p):
        """Is c (which comes after p in the sorted order) held by p?"""
        if c["e"] <= p["e"]:
            return True
        return self.slack > 0 and c["s"] < p["e"] and c["e"] <= p["e"] + self.slack

    def nest(self):
        self.by_thread = defaultdict(list)
        for o in self.ops:
            self.by_thread[o["th"]].append(o)
        self.starts = {}
        for th, lst in self.by_thread.items():
            lst.sort(key=lambda o: (o["s"], -o["e"], o["i"]))
            open_ops = []
            for o in lst:
                while open_ops and not self.inside(o, open_ops[-1]):
                    open_ops.pop()
                o["parent"] = open_ops[-1] if open_ops else None
                open_ops.append(o)
            self.starts[th] = [o["s"] for o in lst]

    def innermost(self, call):
        lst = self.by_thread.get(call["th"])
        if not lst:
            return None
        k = bisect.bisect_right(self.starts[call["th"]], call["s"])
        if k == 0:
            return None
        o = lst[k - 1]
        while o is not None and o["e"] < call["s"]:
            o = o["parent"]
        return o

    def autograd(self, th):
        name = self.thread_names.get(th)
        if name and "pt_autograd" in name:
            return True
        back = sum(1 for o in self.by_thread.get(th, []) if o["parent"] is None and o["fwd"] is not None and o["fwd"] > 0)
        fwd = sum(1 for o in self.by_thread.get(th, []) if o["parent"] is None and o["fwd"] == 0)
        return back > fwd

    def thread_label(self, th):
        name = self.thread_names.get(th)
        label = name if name is not None else "tid %s" % th[1]
        return label + (" [autograd]" if self.autograd(th) else "")


def charged(op, view):
    if op is None or view == "innermost":
        return op
    if view == "top":
        while op["parent"] is not None:
            op = op["parent"]
        return op
    while op is not None and not op["name"].startswith("aten::"):
        op = op["parent"]
    return op


def median(values):
    v = sorted(values)
    n = len(v)
    mid = n // 2
    return Decimal(v[mid]) if n % 2 else (Decimal(v[mid - 1]) + Decimal(v[mid])) / 2


def rows_for(t, view):
    groups = {}
    for k in t.kernels:
        call = t.call_of.get(k["corr"]) if k["corr"] is not None else None
        if call is None:
            continue
        op = charged(t.innermost(call), view)
        key = (op["name"] if op else None, k["name"])
        g = groups.setdefault(key, dict(count=0, total=0, op_delays=[], queue=[], threads=defaultdict(int)))
        g["count"] += 1
        g["total"] += k["e"] - k["s"]
        if op is not None:
            g["op_delays"].append(call["s"] - op["s"])
        g["queue"].append(max(0, k["s"] - call["e"]))
        g["threads"][call["th"]] += 1
    out = []
    for (op, kernel), g in groups.items():
        ths = sorted(g["threads"].items(), key=lambda x: (-x[1], x[0]))
        labels = [t.thread_label(th) for th, _ in ths[:MAX_THREADS]]
        if len(ths) > MAX_THREADS:
            labels.append("+%d more" % (len(ths) - MAX_THREADS))
        d = g["op_delays"]
        out.append([op if op is not None else NULL, kernel, g["count"], g["total"], len(d),
                    sum(d), min(d) if d else NULL, max(d) if d else NULL,
                    sum(g["queue"]), median(g["queue"]), min(g["queue"]), max(g["queue"]), "; ".join(labels)])
    out.sort(key=lambda r: (-r[3], r[0] if r[0] != NULL else "", r[1]))
    return out


COLUMNS = ["trace", "view", "operator", "kernel", "count", "kernel_total_ns", "op_delays", "op_delay_sum_ns",
           "op_delay_min_ns", "op_delay_max_ns", "queue_sum_ns", "queue_med_ns", "queue_min_ns", "queue_max_ns",
           "threads"]


def main():
    traces = os.path.join(shared_dir(), "traces")
    if not os.path.isdir(traces):
        raise SystemExit("no traces under %s" % traces)
    rows_out = []
    for name, rel in TRACES:
        t = Trace(os.path.join(traces, rel))
        for view in VIEWS:
            rows = rows_for(t, view)
            rows_out.extend([name, view] + r for r in rows)
            print("%-28s %-9s %4d rows, %d kernels" % (name, view, len(rows), sum(r[2] for r in rows)), file=sys.stderr)
    _reference.write_reference_tsv(OUT_PATH, "op_kernel_reference.py", TRACES, COLUMNS, rows_out)

if __name__ == "__main__":
    main()
