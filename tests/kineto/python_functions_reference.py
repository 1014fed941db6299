#!/usr/bin/env python3
"""Independent reference values for tracedoc's `python_func_sum` report (Python function time).

tests/python_functions_test.cpp runs `python_func_sum` on the traces below and compares every row,
cell by cell, with the table this script writes (tests/golden/pytorch/python_func_sum.tsv). This
side reads the raw JSON with Python's json module and exact decimals and shares no code with
tracedoc: it finds each call's caller by its id, walks up the callers for recursion, and aggregates
with plain Python.

Usage (standard library only; from anywhere):
    python3 tests/kineto/python_functions_reference.py [SHARED_DIR]
SHARED_DIR defaults to $TRACEDOC_SHARED, else ../shared next to the checkout (as the C++ tests do).
The output path is fixed, relative to this script, so the committed file never names a machine path.

Definitions (the report's, src/analysis/pytorch/python_functions.h; keep the two in step):
- Calls: `python_function` events of phase X with a numeric ts; ts and dur (µs, "us.nnn") to exact
  ns, rounded half away from zero; a missing or non-numeric dur reads as 0, a negative one as 0;
  calls longer than a week are dropped.
- Caller: the call whose args "Python id" equals this call's "Python parent id" (the first such call
  in the file); none when the parent id is null or names no call of the trace. On any thread.
  A trace none of whose calls has a parent id nests by time instead: per (pid, tid), calls sorted by
  (start, end descending, file order), each inside the nearest open call that ends no later.
- Self time: duration minus the durations of the direct callees, at least 0.
- Per function name: Calls; Self (sum); Total (durations of the calls with no caller of the same
  name anywhere up their chain of callers); Max (longest call); Threads (distinct (pid, tid)).
- Rows by self time descending, then name.
"""

import gzip
import json
import os
import sys
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference as _reference  # noqa: E402  (this folder's module)
CHECKOUT = os.path.dirname(os.path.dirname(HERE))
OUT_PATH = os.path.join(CHECKOUT, "tests", "golden", "pytorch", "python_func_sum.tsv")

# (name used by the C++ test, path under SHARED/traces): every trace with python_function events
# that keeps this file small, H100 and its MI300X twin, B200, and the edge cases noted.
TRACES = [
    ("bert_small_h100", "kineto/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"),
    ("bert_small_mi300", "kineto/TraceLens/tests/traces/mi300/gaunernst_bert-small-uncased__1016001.json.gz"),
    # parent ids naming calls that began before profiling
    ("eager_b200", "kineto/TraceLens/tests/traces/b200/eager_trace.json.gz"),
    ("normalization_layer", "kineto/TraceLens/tests/traces/perf_model/normalization/normalization_layer_test.json.gz"),
    # activation checkpointing: hooks on the autograd thread whose caller is the main thread's
    # run_backward, and which outlast it (self time clamped at 0)
    ("resnet_act_checkpoint_mi300", "kineto/TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz"),
    # half the parent ids name calls outside the trace
    ("vllm_graph_execution", "kineto/TraceLens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz"),
    # zero-length calls
    ("sglang_prefilldecode", "kineto/TraceLens/tests/traces/inference/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz"),
]

WEEK_NS = 7 * 24 * 3600 * 10**9
shared_dir = _reference.shared_dir
to_ns = _reference.to_ns
is_number = _reference.is_number


def ident(v):
    """pid / tid as an int where it is one, negatives as Kineto's sanitizeTid makes them."""
    try:
        return abs(int(v))
    except (TypeError, ValueError):
        return str(v)


def load_calls(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        doc = json.loads(f.read().decode("utf-8", errors="replace"), parse_float=Decimal, strict=False)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    calls = []
    for e in events:
        if not isinstance(e, dict) or e.get("cat") != "python_function" or e.get("ph") != "X":
            continue
        if not is_number(e.get("ts")):
            continue
        s = to_ns(e["ts"])
        dur = max(0, to_ns(e["dur"])) if is_number(e.get("dur")) else 0
        if dur > WEEK_NS:
            continue
        args = e.get("args") or {}
        pid, parent = args.get("Python id"), args.get("Python parent id")
        calls.append(dict(name=e.get("name", ""), s=s, e=s + dur, th=(ident(e.get("pid")), ident(e.get("tid"))),
                          id=pid if isinstance(pid, int) else None,
                          parent_id=parent if isinstance(parent, int) else None))
    return calls


def link_by_id(calls):
    first = {}
    for c in calls:
        if c["id"] is not None:
            first.setdefault(c["id"], c)
    for c in calls:
        p = first.get(c["parent_id"]) if c["parent_id"] is not None else None
        c["caller"] = p if p is not c else None


def link_by_time(calls):
    threads = {}
    for i, c in enumerate(calls):
        c["i"] = i
        threads.setdefault(c["th"], []).append(c)
    for lst in threads.values():
        lst.sort(key=lambda c: (c["s"], -c["e"], c["i"]))
        open_calls = []
        for c in lst:
            while open_calls and c["e"] > open_calls[-1]["e"]:
                open_calls.pop()
            c["caller"] = open_calls[-1] if open_calls else None
            open_calls.append(c)


def rows_for(calls):
    if any(c["parent_id"] is not None for c in calls):
        link_by_id(calls)
    else:
        link_by_time(calls)
    callee_time = {}
    for c in calls:
        if c["caller"] is not None:
            key = id(c["caller"])
            callee_time[key] = callee_time.get(key, 0) + (c["e"] - c["s"])
    groups = {}
    for c in calls:
        dur = c["e"] - c["s"]
        g = groups.setdefault(c["name"], dict(calls=0, self=0, total=0, max=0, threads=set()))
        g["calls"] += 1
        g["self"] += max(0, dur - callee_time.get(id(c), 0))
        g["max"] = max(g["max"], dur)
        g["threads"].add(c["th"])
        up = c["caller"]
        while up is not None and up["name"] != c["name"]:
            up = up["caller"]
        if up is None:
            g["total"] += dur
    out = [[name, g["self"], g["total"], g["calls"], g["max"], len(g["threads"])] for name, g in groups.items()]
    out.sort(key=lambda r: (-r[1], r[0]))
    return out


COLUMNS = ["trace", "function", "self_ns", "total_ns", "calls", "max_ns", "threads"]


def main():
    traces = os.path.join(shared_dir(), "traces")
    if not os.path.isdir(traces):
        raise SystemExit("no traces under %s" % traces)
    rows_out = []
    for name, rel in TRACES:
        calls = load_calls(os.path.join(traces, rel))
        rows = rows_for(calls)
        rows_out.extend([name] + r for r in rows)
        print("%-28s %5d rows, %6d calls" % (name, len(rows), len(calls)), file=sys.stderr)
    _reference.write_reference_tsv(OUT_PATH, "python_functions_reference.py", TRACES, COLUMNS, rows_out)

if __name__ == "__main__":
    main()
