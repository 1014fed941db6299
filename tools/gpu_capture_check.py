#!/usr/bin/env python3
"""`tracedoc capture` on a real GPU, against what torch.profiler records for the same steps.

Run on a machine with an NVIDIA GPU, PyTorch and a built tracedoc (libtracedoc_inject.so built with
the CUDA toolkit's CUPTI headers):

    python3 tools/gpu_capture_check.py [--tracedoc build/tracedoc] [--out DIR]

It runs one small, deterministic training loop (an MLP with a DataLoader-like host copy, NVTX
ranges per step) three times:
  1. under `tracedoc capture` (NVTX + CUDA activity, --export sqlite),
  2. under torch.profiler (Kineto, CUPTI) for the same steps, written as a Chrome trace,
  3. with neither, for the timing baseline;
two microbenchmarks (10,000 empty-kernel launches, with and without capture) for the
per-launch cost; a CUDA graph replayed 20 times, captured with --cuda-graph-trace=graph (20 graph
launches expected) and =node (every replay's kernels, with their graph node ids); and a DataLoader
with 2 worker processes under --trace osrt-lite (one file per process, the main thread's waits for
its workers recorded); and the loop again with --sample cpu and --osrt-backtrace (CPU samples naming
libpython and libtorch frames, OS calls with stacks, the step slowdown with sampling). torch.profiler
records shapes and PyTorch's own FLOPs (with_flops), which tracedoc's op_flops_sum must equal for
the matrix multiplies; and the loop runs once more under emit_nvtx(record_shapes=True) inside a
capture, for an export whose operator ranges carry their shapes (the torch trace and that export
are test data for the FLOPs reports: shapes, a `flops` arg, and an H200's MFU). Two CUPTI clients cannot record one process at once, hence separate runs of the
same loop. It checks that per profiled step the kernels (count and names), the copies (count,
bytes, direction) and the NVTX step ranges agree between the capture and torch.profiler, prints
the overhead figures (target: <= 2 us per kernel launch, <= 5% step time), writes everything to
DIR/figures.json and exits 1 when a check fails.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

STEPS, WARMUP = 12, 2


def train(mode, out):
    """The loop itself (run in a child process): mode is capture, torch or plain."""
    import torch
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    host = torch.randn(64, 1024).pin_memory()
    prof = None
    if mode == "torch":
        # Shapes and PyTorch's own FLOPs (the `flops` arg) for tracedoc's FLOPs reports to agree with.
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
                                      schedule=torch.profiler.schedule(wait=0, warmup=WARMUP, active=STEPS - WARMUP),
                                      record_shapes=True, with_flops=True)
        prof.start()
    if mode == "nvtx":
        # The operators as NVTX ranges with their shapes ("aten::addmm, seq = 12, sizes = [[...]]").
        prof = torch.autograd.profiler.emit_nvtx(record_shapes=True)
        prof.__enter__()
    times = []
    for step in range(STEPS):
        torch.cuda.synchronize()
        began = time.perf_counter()
        torch.cuda.nvtx.range_push(f"step {step}")
        x = host.to(dev, non_blocking=True)
        loss = model(x).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - began)
        if mode == "torch":
            prof.step()
    if mode == "torch":
        prof.stop()
        prof.export_chrome_trace(str(out))
    if mode == "nvtx":
        prof.__exit__(None, None, None)
    json.dump({"step_s": times}, open(str(out) + ".times.json", "w"))


def launches(n, out):
    import torch
    x = torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    began = time.perf_counter()
    for _ in range(n):
        x.add_(1)
    torch.cuda.synchronize()
    json.dump({"per_launch_s": (time.perf_counter() - began) / n}, open(out, "w"))


GRAPH_REPLAYS = 20


def graphs(out):
    """A CUDA graph of a small forward pass, replayed GRAPH_REPLAYS times."""
    import torch
    model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256)).cuda()
    x = torch.randn(32, 256, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            model(x)  # warm up off the capture, as torch.cuda.graphs asks
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        model(x)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("replays")
    for _ in range(GRAPH_REPLAYS):
        g.replay()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    json.dump({"replays": GRAPH_REPLAYS}, open(out, "w"))


def loader(out):
    """A DataLoader with two worker processes feeding the GPU."""
    import torch
    data = torch.utils.data.TensorDataset(torch.randn(512, 1024))
    batches = 0
    for (x,) in torch.utils.data.DataLoader(data, batch_size=32, num_workers=2):
        x.cuda().sum().item()
        batches += 1
    json.dump({"batches": batches}, open(out, "w"))


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stderr[-2000:]}")
    return r


def per_step(trace_json, capture_sqlite):
    """Kernels, copies and step ranges per profiled step, from both recordings."""
    import sqlite3
    torch_steps = {}
    events = json.load(open(trace_json))["traceEvents"]
    steps = sorted((e for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")), key=lambda e: e["ts"])
    kernels = [e for e in events if e.get("cat") == "kernel"]
    copies = [e for e in events if e.get("cat") == "gpu_memcpy"]
    for i, s in enumerate(steps):
        lo, hi = s["ts"], s["ts"] + s["dur"]
        # A step's GPU work is what its launches started; the kernels ending up to 1 ms later still belong to it.
        torch_steps[i] = {"kernels": Counter(k["name"] for k in kernels if lo <= k["ts"] < hi + 1000),
                          "copies": sum(1 for c in copies if lo <= c["ts"] < hi + 1000)}
    db = sqlite3.connect(capture_sqlite)
    names = dict(db.execute("SELECT id, value FROM StringIds"))
    ranges = db.execute("SELECT start, end, coalesce(text, (SELECT value FROM StringIds WHERE id = textId)) FROM NVTX_EVENTS "
                        "WHERE eventType = 59 ORDER BY start").fetchall()
    step_ranges = [(s, e, n) for s, e, n in ranges if n and n.startswith("step ")]
    ks = db.execute("SELECT start, demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchall()
    cs = db.execute("SELECT start, bytes, copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY").fetchall()
    capture_steps = {}
    for s, e, n in step_ranges[WARMUP:]:
        i = int(n.split()[1]) - WARMUP
        capture_steps[i] = {"kernels": Counter(names.get(k, k) for t, k in ks if s <= t < e + 1_000_000),
                            "copies": sum(1 for t, b, kind in cs if s <= t < e + 1_000_000)}
    return torch_steps, capture_steps, len(step_ranges)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tracedoc", default=str(Path(__file__).resolve().parent.parent / "build" / "tracedoc"))
    ap.add_argument("--out", default="gpu-capture-check")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--target", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child == "train-capture":
        return train("capture", a.target)
    if a.child in ("train-torch", "train-plain", "train-nvtx"):
        return train(a.child.split("-")[1], a.target)
    if a.child == "launches":
        return launches(10_000, a.target)
    if a.child == "graphs":
        return graphs(a.target)
    if a.child == "loader":
        return loader(a.target)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    me = [sys.executable, os.path.abspath(__file__)]
    capture_dir = out / "capture"
    run([a.tracedoc, "capture", "-o", str(capture_dir), "--force-overwrite", "--export", "sqlite", "--", *me,
         "--child", "train-capture", "--target", str(out / "capture-run")])
    run(me + ["--child", "train-torch", "--target", str(out / "torch.json")])
    run(me + ["--child", "train-plain", "--target", str(out / "plain")])
    run([a.tracedoc, "capture", "-o", str(out / "launch-capture"), "--force-overwrite", "--", *me, "--child", "launches",
         "--target", str(out / "launch-captured.json")])
    run(me + ["--child", "launches", "--target", str(out / "launch-plain.json")])

    for mode in ("graph", "node"):
        run([a.tracedoc, "capture", "-o", str(out / f"graphs-{mode}"), "--force-overwrite", "--export", "sqlite",
             "--cuda-graph-trace", mode, "--", *me, "--child", "graphs", "--target", str(out / f"graphs-{mode}.json")])
    run([a.tracedoc, "capture", "-o", str(out / "loader"), "--force-overwrite", "--trace", "cuda,nvtx,osrt-lite", "--export", "sqlite",
         "--", *me, "--child", "loader", "--target", str(out / "loader.json")])
    # The same loop with CPU samples and the stacks of its OS calls.
    run([a.tracedoc, "capture", "-o", str(out / "sampled"), "--force-overwrite", "--sample", "cpu", "--trace",
         "cuda,nvtx,osrt-lite", "--osrt-backtrace", "--export", "sqlite", "--", *me, "--child", "train-capture",
         "--target", str(out / "sampled-run")])

    # The operators as emit_nvtx ranges with their shapes, under tracedoc capture.
    run([a.tracedoc, "capture", "-o", str(out / "nvtx-shapes"), "--force-overwrite", "--export", "sqlite", "--", *me,
         "--child", "train-nvtx", "--target", str(out / "nvtx-run")])

    failures = []
    import sqlite3

    # FLOPs: tracedoc's matrix multiplies against PyTorch's own `flops` args on the same operators.
    events = json.load(open(out / "torch.json"))["traceEvents"]
    matmuls = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear")
    torch_flops = sum(int(e["args"]["flops"]) for e in events
                      if e.get("cat") == "cpu_op" and e.get("name") in matmuls and "flops" in e.get("args", {}))
    rows = run([a.tracedoc, "stats", "-r", "op_flops_sum", "-f", "csv", str(out / "torch.json")]).stdout.splitlines()
    header = rows[0].split(",") if rows else []
    tracedoc_flops = sum(int(r.split(",")[header.index("FLOPs")]) for r in rows[1:] if r.startswith("matmul,"))
    if torch_flops == 0 or torch_flops != tracedoc_flops:
        failures.append(f"matrix-multiply FLOPs: tracedoc {tracedoc_flops}, PyTorch's flops args {torch_flops}")
    mfu = run([a.tracedoc, "stats", "-r", "step_mfu_sum", "-f", "csv", str(out / "torch.json")]).stdout
    nvtx_db = sqlite3.connect(str(out / "nvtx-shapes") + ".sqlite")
    nvtx_with_sizes = nvtx_db.execute("SELECT count(*) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
                                      "WHERE coalesce(n.text, s.value) LIKE 'aten::%, sizes = [%'").fetchone()[0]
    if nvtx_with_sizes == 0:
        failures.append("emit_nvtx(record_shapes=True) under capture: no operator ranges with sizes")

    def count(db, table, where="1"):
        exists = db.execute("SELECT count(*) FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
        return db.execute(f"SELECT count(*) FROM {table} WHERE {where}").fetchone()[0] if exists else 0
    graph_db = sqlite3.connect(str(out / "graphs-graph") + ".sqlite")
    node_db = sqlite3.connect(str(out / "graphs-node") + ".sqlite")
    graph_launches = count(graph_db, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE")
    node_kernels = count(node_db, "CUPTI_ACTIVITY_KIND_KERNEL", "graphNodeId IS NOT NULL")
    if graph_launches != GRAPH_REPLAYS:
        failures.append(f"--cuda-graph-trace=graph: {graph_launches} graph launches recorded, {GRAPH_REPLAYS} replayed")
    if node_kernels == 0 or node_kernels % GRAPH_REPLAYS != 0:
        failures.append(f"--cuda-graph-trace=node: {node_kernels} graph kernels, not a multiple of {GRAPH_REPLAYS} replays")
    loader_files = len(list((out / "loader").glob("*.tdcap")))
    loader_db = sqlite3.connect(str(out / "loader") + ".sqlite")
    os_calls = count(loader_db, "OSRT_API")
    if loader_files < 3:
        failures.append(f"DataLoader with 2 workers: {loader_files} capture files (the main process and 2 workers expected)")
    if os_calls == 0:
        failures.append("DataLoader under osrt-lite: no OS calls recorded")
    sampled_db = sqlite3.connect(str(out / "sampled") + ".sqlite")
    samples = count(sampled_db, "COMPOSITE_EVENTS")

    def frames_in(module_like):
        if not count(sampled_db, "SAMPLING_CALLCHAINS"):
            return 0
        return sampled_db.execute("SELECT count(*) FROM SAMPLING_CALLCHAINS c JOIN StringIds s ON s.id = c.module "
                                  "WHERE s.value LIKE ?", (module_like,)).fetchone()[0]
    python_frames, torch_frames = frames_in("%python3%"), frames_in("%libtorch%")
    osrt_stacks = count(sampled_db, "OSRT_CALLCHAINS")
    if samples == 0:
        failures.append("--sample cpu: no CPU samples recorded")
    if python_frames == 0 or torch_frames == 0:
        failures.append(f"--sample cpu: {python_frames} libpython and {torch_frames} libtorch frames (both expected)")
    if osrt_stacks == 0:
        failures.append("--osrt-backtrace: no OS-call stacks recorded")
    torch_steps, capture_steps, nvtx_steps = per_step(out / "torch.json", str(capture_dir) + ".sqlite")
    if nvtx_steps != STEPS:
        failures.append(f"NVTX step ranges: {nvtx_steps} recorded, {STEPS} pushed")
    for i in sorted(torch_steps):
        t, c = torch_steps[i], capture_steps.get(i)
        if c is None:
            failures.append(f"step {i}: not in the capture")
            continue
        if sum(t["kernels"].values()) != sum(c["kernels"].values()):
            failures.append(f"step {i}: {sum(c['kernels'].values())} kernels captured, torch.profiler {sum(t['kernels'].values())}")
        if t["copies"] != c["copies"]:
            failures.append(f"step {i}: {c['copies']} copies captured, torch.profiler {t['copies']}")
    plain = json.load(open(str(out / "plain") + ".times.json"))["step_s"][WARMUP:]
    captured = json.load(open(str(out / "capture-run") + ".times.json"))["step_s"][WARMUP:]
    slowdown = 100 * (sorted(captured)[len(captured) // 2] / sorted(plain)[len(plain) // 2] - 1)
    sampled_steps = json.load(open(str(out / "sampled-run") + ".times.json"))["step_s"][WARMUP:]
    sampled_slowdown = 100 * (sorted(sampled_steps)[len(sampled_steps) // 2] / sorted(plain)[len(plain) // 2] - 1)
    per_launch = (json.load(open(out / "launch-captured.json"))["per_launch_s"] - json.load(open(out / "launch-plain.json"))["per_launch_s"]) * 1e6
    figures = {"steps_compared": len(torch_steps), "step_slowdown_pct": slowdown, "capture_cost_per_launch_us": per_launch,
               "graph_launches": graph_launches, "graph_node_kernels": node_kernels, "loader_processes": loader_files,
               "loader_os_calls": os_calls, "cpu_samples": samples, "libpython_frames": python_frames,
               "libtorch_frames": torch_frames, "osrt_stack_frames": osrt_stacks,
               "step_slowdown_sampled_pct": sampled_slowdown, "matmul_flops_tracedoc": tracedoc_flops,
               "matmul_flops_pytorch": torch_flops, "step_mfu_csv": mfu, "nvtx_ranges_with_sizes": nvtx_with_sizes,
               "failures": failures}
    json.dump(figures, open(out / "figures.json", "w"), indent=2)
    print(json.dumps(figures, indent=2))
    if per_launch > 2:
        print(f"over target: {per_launch:.2f} us per kernel launch (target 2 us)")
    if slowdown > 5:
        print(f"over target: step time +{slowdown:.1f}% (target 5%)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
