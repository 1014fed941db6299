#!/usr/bin/env python3
"""FLOPs and bytes of PyTorch operators, recomputed from the traces' own args, independently of
tracedoc's C++ (src/analysis/pytorch/op_flops.cpp), against `tracedoc stats -r op_flops_sum`.

For each shared PyTorch trace with shapes it reads the JSON itself, nests the operators of each
thread by time, applies the formulas of docs/flops.md (PyTorch's torch.utils.flop_counter
conventions) to the matrix multiplies, convolutions and attention operators, counts each chain of
nested operators once (its outermost operator whose shapes give the cost), and checks that every
(operator, input dims) row of tracedoc's report has exactly these calls, FLOPs and bytes.

Usage (ctest runs it): flops_check.py TRACEDOC_BINARY SOURCE_DIR
Exit status: 0 passed, 1 failed, 77 skipped (no ../shared).
"""

import csv
import gzip
import io
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

SKIP = 77
TRACES = [
    "kineto/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
    "kineto/TraceLens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    "kineto/TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz",
    "kineto/TraceLens/tests/traces/b200/eager_trace.json.gz",
    "kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
    "kineto/HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz",
]
ELEMENT = {"double": 8, "float": 4, "c10::Half": 2, "c10::BFloat16": 2, "long int": 8, "int": 4, "bool": 1,
           "unsigned char": 1, "signed char": 1, "c10::Float8_e4m3fn": 1, "c10::Float8_e5m2": 1,
           "c10::Float8_e4m3fnuz": 1, "c10::Float8_e5m2fnuz": 1, "short int": 2}


def prod(xs):
    p = 1
    for x in xs:
        p *= max(x, 0)
    return p


class Op:
    def __init__(self, e):
        a = e.get("args", {})
        self.name = e["name"]
        self.dims = a.get("Input Dims")
        self.types = a.get("Input type") or []
        self.concrete = a.get("Concrete Inputs") or []
        self.start = round(float(e["ts"]) * 1000)
        self.end = self.start + round(float(e.get("dur", 0)) * 1000)
        self.tid = (e["pid"], e["tid"])
        self.children = []

    def dim(self, i):
        d = self.dims[i] if self.dims and i < len(self.dims) else None
        return d if isinstance(d, list) and all(isinstance(x, int) for x in d) else None

    def elem(self, i):
        """Bytes per element of argument i: 0 for a non-tensor type, float without recorded types."""
        if not self.types:
            return 4
        return ELEMENT.get(self.types[i] if i < len(self.types) else "", 0)

    def out_elem(self, i):
        """Bytes per element of a result shaped after argument i (at least 1)."""
        return max(self.elem(i), 1)

    def nbytes(self, i):
        d = self.dim(i)
        return 0 if d is None else prod(d) * self.elem(i)


def ints(text):
    text = (text or "").strip()
    if text.startswith("["):
        return [int(x) for x in text.strip("[]").split(",") if x.strip()]
    return [int(text)] if text.lstrip("-").isdigit() else []


def matmul(op, short):
    a, b = (1, 2) if short in ("addmm", "baddbmm", "addbmm") else (0, 1)
    x, y = op.dim(a), op.dim(b)
    if not x or not y:
        return None
    if short == "linear":
        if len(y) != 2 or y[1] != x[-1]:
            return None
        batch, m, k, n = prod(x[:-1]), 1, x[-1], y[0]
    else:
        k = x[-1]
        m = x[-2] if len(x) >= 2 else 1
        n = y[-1] if len(y) >= 2 else 1
        if (y[-2] if len(y) >= 2 else y[0]) != k:
            return None
        bx, by = x[:-2], y[:-2]
        width = max(len(bx), len(by))
        bx, by = [1] * (width - len(bx)) + bx, [1] * (width - len(by)) + by
        batch = prod(max(p, q) for p, q in zip(bx, by))
    flops = 2 * batch * m * k * n
    out = batch * m * n * op.out_elem(a)
    extra = op.nbytes(0) if short in ("addmm", "baddbmm", "addbmm") else op.nbytes(2) if short == "linear" else 0
    return flops, op.nbytes(a) + op.nbytes(b) + out + extra


CONV = {"conv1d": (3, 4, 5, None), "conv2d": (3, 4, 5, None), "conv3d": (3, 4, 5, None),
        "convolution": (3, 4, 5, 6), "_convolution": (3, 4, 5, 6), "cudnn_convolution": (3, 2, 4, None),
        "miopen_convolution": (4, 3, 5, None), "mkldnn_convolution": (4, 3, 5, None)}


def conv(op, short):
    s_at, p_at, d_at, t_at = CONV[short]
    x, w = op.dim(0), op.dim(1)
    if not x or not w or len(x) < 3 or len(w) != len(x):
        return None
    n = len(x) - 2

    def arg(at):
        v = ints(op.concrete[at]) if at < len(op.concrete) else []
        return v * n if len(v) == 1 else v
    stride, pad, dil = arg(s_at), arg(p_at), arg(d_at)
    if len(stride) != n or len(pad) != n or len(dil) != n:
        return None
    transposed = t_at is not None and t_at < len(op.concrete) and op.concrete[t_at] == "True"
    if transposed:
        spatial = x[2:]
    else:
        spatial = [(x[2 + i] + 2 * pad[i] - dil[i] * (w[2 + i] - 1) - 1) // stride[i] + 1 for i in range(n)]
    flops = 2 * x[0] * prod(w) * prod(spatial)
    out = x[0] * (w[1] if transposed else w[0]) * prod(spatial) * op.out_elem(0)
    return flops, op.nbytes(0) + op.nbytes(1) + out + op.nbytes(2)


def conv_backward(op, short):
    grad, inp, passes = (1, 0, 2) if short in ("cudnn_convolution_backward", "miopen_convolution_backward") else (0, 1, 2)
    if short == "cudnn_convolution_backward_input":
        grad, inp, passes = 1, None, 1
    g, w = op.dim(grad), op.dim(2)
    if not g or not w or len(g) < 3 or len(w) != len(g):
        return None
    if short != "cudnn_convolution_backward_input" and op.concrete and op.concrete[-1].startswith("["):
        mask = [m.strip() == "True" for m in op.concrete[-1].strip("[]").split(",")]
        passes = sum(mask[:2])
    flops = passes * 2 * g[0] * prod(w) * prod(g[2:])
    ib = op.nbytes(inp) if inp is not None else 0
    return flops, op.nbytes(grad) + op.nbytes(2) + ib + ib + op.nbytes(2)


def attention(op, short):
    backward = short.endswith("_backward")
    seq_second = short.startswith("_flash_attention") or short.startswith("_efficient_attention")
    f = 1 if backward else 0
    q, k, v = op.dim(f), op.dim(f + 1), op.dim(f + 2)
    if not q or not k or not v or len(q) != 4 or len(k) != 4 or len(v) != 4:
        return None
    b, h, sq, dq = (q[0], q[2], q[1], q[3]) if seq_second else (q[0], q[1], q[2], q[3])
    sk, dv = (k[1] if seq_second else k[2]), v[3]
    flops = 2 * b * h * sq * sk * ((3 * dq + 2 * dv) if backward else (dq + dv))
    qkv = op.nbytes(f) + op.nbytes(f + 1) + op.nbytes(f + 2)
    out = b * h * sq * dv * op.out_elem(f)
    return flops, (2 * qkv + 2 * out) if backward else (qkv + out)


def cost(op):
    if not op.name.startswith("aten::"):
        return None
    short = op.name[6:]
    if short in ("mm", "addmm", "bmm", "baddbmm", "addbmm", "matmul", "linear", "_scaled_mm"):
        return matmul(op, "mm" if short == "_scaled_mm" else short)
    if short in CONV:
        return conv(op, short)
    if short in ("convolution_backward", "cudnn_convolution_backward", "miopen_convolution_backward",
                 "cudnn_convolution_backward_input"):
        return conv_backward(op, short)
    if short == "scaled_dot_product_attention" or short.startswith(("_scaled_dot_product_", "_flash_attention_",
                                                                       "_efficient_attention_")):
        return attention(op, short)
    return None


def expected(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    ops = [Op(e) for e in doc["traceEvents"]
           if isinstance(e, dict) and e.get("ph") == "X" and e.get("cat") in ("cpu_op", "Operator")]
    # Nest per thread by time: parents (earlier start, later end) before children.
    by_thread = defaultdict(list)
    for op in ops:
        by_thread[op.tid].append(op)
    roots = []
    for thread_ops in by_thread.values():
        thread_ops.sort(key=lambda o: (o.start, -o.end))
        stack = []
        for op in thread_ops:
            while stack and not (op.start >= stack[-1].start and op.end <= stack[-1].end + 1000):
                stack.pop()
            (stack[-1].children if stack else roots).append(op)
            stack.append(op)
    rows = defaultdict(lambda: [0, 0, 0])
    todo = list(roots)
    while todo:
        op = todo.pop()
        c = cost(op)
        if c is not None:
            key = (op.name, json.dumps(op.dims))  # as tracedoc prints Input Dims: Kineto's own spacing
            rows[key][0] += 1
            rows[key][1] += c[0]
            rows[key][2] += c[1]
            continue  # counted: its descendants are inside it
        todo.extend(op.children)
    return rows


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    binary, source = sys.argv[1], Path(sys.argv[2]).resolve()
    shared = Path(os.environ.get("TRACEDOC_SHARED", source.parent / "shared")) / "traces"
    if not shared.is_dir():
        print("flops_check: skipped: ../shared/traces not found (set TRACEDOC_SHARED)")
        return SKIP
    failures = 0
    for rel in TRACES:
        path = shared / rel
        if not path.is_file():
            print(f"flops_check: {rel} not found: skipped")
            continue
        want = expected(str(path))
        run = subprocess.run([binary, "stats", "-r", "op_flops_sum", "-f", "csv", str(path)],
                             capture_output=True, text=True, timeout=300)
        got = {}
        for r in csv.DictReader(io.StringIO(run.stdout)):
            if r["Kind"] not in ("matmul", "convolution", "attention"):
                continue
            key = (r["Operator"], r["Input Dims"])
            g = got.setdefault(key, [0, 0, 0])  # one row per dtype and device: summed per shape
            g[0] += int(r["Calls"])
            g[1] += int(r["FLOPs"])
            g[2] += int(r["Bytes"])
        flops = sum(v[1] for v in want.values())
        if got == want and want:
            print(f"ok: {rel}: {len(want)} operator shapes, {sum(v[0] for v in want.values())} calls, "
                  f"{flops / 1e12:.3f} TFLOP: calls, FLOPs and bytes equal")
        else:
            failures += 1
            missing = sorted(set(want) - set(got))[:3]
            extra = sorted(set(got) - set(want))[:3]
            differ = [(k, want[k], got[k]) for k in want if k in got and want[k] != got[k]][:3]
            print(f"FAIL: {rel}: {len(want)} expected rows, {len(got)} from tracedoc (exit {run.returncode} "
                  f"{run.stderr.strip()[:200]}); missing {missing}; extra {extra}; differ {differ}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
