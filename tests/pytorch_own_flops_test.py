#!/usr/bin/env python3
"""tracedoc's FLOPs against PyTorch's own, on the recordings of tests/data/pytorch-cpu.

tools/record_cpu_pytorch.py ran one small training loop (linear, matmul, bmm, conv2d, attention,
norms, activations; forward, backward and SGD, three steps) under the PyTorch profiler with
record_shapes=True and with_flops=True, and saved beside the trace what PyTorch itself computed:
the profiler's per-call FLOPs (FunctionEvent.flops; PyTorch 2.15 does not write them into the
trace) and torch.utils.flop_counter's totals per aten operator for one step of the same loop. The
same loop under emit_nvtx(record_shapes=True), recorded by nsys, is the export beside them.

Checks:
  1. per call: every call PyTorch gave FLOPs for (mm, bmm, conv2d, add, mul, ...) that is a row of
     `op_flops_sum` has PyTorch's FLOPs per call in that row;
  2. per step: op_flops_sum's matrix multiplies, convolutions and attention hold exactly
     flop_counter's FLOPs for the same families, times the steps (and step_mfu_sum's model FLOPs per
     step equal flop_counter's total);
  3. the nsys export: op_flops_sum's matrix multiply and attention rows are the PyTorch trace's,
     row for row (emit_nvtx records no strides, so its convolutions differ: docs/flops.md).

Usage (ctest runs it): pytorch_own_flops_test.py TRACEDOC_BINARY SOURCE_DIR
Exit status: 0 passed, 1 failed.
"""

import csv
import io
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

FAMILY = {  # flop_counter's aten operators by op_flops_sum's Kind
    "matmul": ("aten.mm", "aten.addmm", "aten.bmm", "aten.baddbmm"),
    "convolution": ("aten.convolution", "aten.convolution_backward"),
    "attention": ("aten._scaled_dot_product_flash_attention_for_cpu",
                  "aten._scaled_dot_product_flash_attention_for_cpu_backward"),
}


def report(tracedoc, trace, name):
    out = subprocess.run([tracedoc, "stats", "-r", name, "-f", "csv", str(trace)], capture_output=True, text=True,
                         check=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


def main():
    tracedoc, source = sys.argv[1], Path(sys.argv[2])
    data = source / "tests" / "data" / "pytorch-cpu"
    trace, export = data / "cpu_train_flops.json.gz", data / "cpu_train_emit_nvtx.sqlite"
    oracle = json.loads((data / "cpu_train_flops.pytorch.json").read_text())
    failures = []

    rows = report(tracedoc, trace, "op_flops_sum")
    by_call = {(r["Operator"], r["Input Dims"]): r for r in rows}

    # 1. Per call.
    checked = defaultdict(int)
    for call in oracle["function_event_flops"]:
        dims = json.dumps(call["input_shapes"])
        row = by_call.get((call["name"], dims))
        if row is None:
            continue  # held by an outer operator (aten::addmm inside aten::linear): checked per step
        per_call = int(row["FLOPs"]) // int(row["Calls"])
        if per_call * int(row["Calls"]) != int(row["FLOPs"]) or per_call != call["flops"]:
            failures.append(f"{call['name']} {dims}: PyTorch {call['flops']} FLOPs per call, tracedoc "
                            f"{row['FLOPs']} in {row['Calls']} calls")
        checked[call["name"]] += 1
    for name in ("aten::mm", "aten::bmm", "aten::conv2d"):
        if checked[name] == 0:
            failures.append(f"no {name} call of PyTorch's matched a row of op_flops_sum")

    # 2. Per step, by family.
    steps = oracle["steps"]
    counter = oracle["flop_counter_per_step"]
    for kind, ops in FAMILY.items():
        expected = steps * sum(counter.get(op, 0) for op in ops)
        got = sum(int(r["FLOPs"]) for r in rows if r["Kind"] == kind)
        if expected == 0 or got != expected:
            failures.append(f"{kind}: flop_counter {expected} FLOPs in {steps} steps, op_flops_sum {got}")
    unknown = set(counter) - {op for ops in FAMILY.values() for op in ops}
    if unknown:
        failures.append(f"flop_counter counted operators this test does not map: {sorted(unknown)}")
    mfu = report(tracedoc, trace, "step_mfu_sum")
    per_step = [int(r["Model FLOPs"]) for r in mfu]
    if per_step != [oracle["flop_counter_total_per_step"]] * steps:
        failures.append(f"step_mfu_sum's model FLOPs per step {per_step}, flop_counter "
                        f"{oracle['flop_counter_total_per_step']}")

    # 3. The same loop through emit_nvtx and nsys.
    def model_rows(rs):
        return sorted((r["Kind"], r["Operator"], r["Input Dims"], r["Calls"], r["FLOPs"], r["Bytes"])
                      for r in rs if r["Kind"] in ("matmul", "attention"))

    from_trace, from_export = model_rows(rows), model_rows(report(tracedoc, export, "op_flops_sum"))
    if not from_trace or from_export != from_trace:
        failures.append("the nsys export's matmul and attention rows differ from the PyTorch trace's:\n  "
                        + "\n  ".join(str(r) for r in sorted(set(from_export) ^ set(from_trace))))

    for f in failures:
        print("FAIL:", f)
    print(f"pytorch_own_flops: {sum(checked.values())} calls checked against PyTorch's FLOPs "
          f"({', '.join(f'{n} {c}' for n, c in sorted(checked.items()))}); "
          f"{len(from_trace)} matmul/attention rows of the export compared; "
          f"{'FAILED' if failures else 'passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
