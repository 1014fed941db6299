#!/usr/bin/env python3
"""Records the PyTorch test traces of tests/data/pytorch-cpu/ on a machine without a GPU.

The FLOPs reports need two recordings that the shared traces lack, and neither needs a GPU:

  1. a PyTorch profiler (Kineto) trace with record_shapes=True and with_flops=True, so that the
     trace's own `flops` args can be compared with tracedoc's formulas
     (cpu_train_flops.json.gz). PyTorch computes those args (FunctionEvent.flops, for mm, addmm,
     bmm, baddbmm, conv2d, add and mul) but, as of PyTorch 2.15, does not write them into the
     trace, so they are saved beside it with the totals of torch.utils.flop_counter for one step
     of the same loop (cpu_train_flops.pytorch.json): PyTorch's own figures to test against;
  2. an Nsight Systems export of the same loop under emit_nvtx(record_shapes=True), whose operator
     ranges carry their shapes ("aten::addmm, seq = 12, op_id = 40, sizes = [[64], [64, 256], ...]")
     (cpu_train_emit_nvtx.sqlite).

The loop is a small model that runs every operator family op_flops counts (linear, matmul, bmm,
conv2d, scaled-dot-product attention, layer norm, softmax, GELU, embedding, a reduction) through
forward, backward and an SGD update, three steps, each in a ProfilerStep#N range.

Usage (PyTorch from PyPI, nsys with its QdstrmImporter on PATH or given):

    python3 tools/record_cpu_pytorch.py --out tests/data/pytorch-cpu \
        [--nsys nsys] [--importer QdstrmImporter]

A CUDA build of PyTorch is needed for emit_nvtx (a CPU-only build has no NVTX); the program calls
no CUDA function, and emit_nvtx's torch.cuda.synchronize() waits for nothing here, so it is skipped
when no GPU is present.
"""
import argparse
import gzip
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

STEPS = 3


def build_model():
    import torch
    torch.manual_seed(0)

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(512, 64)
            self.conv = torch.nn.Conv2d(3, 8, kernel_size=3, stride=1, padding=1)
            self.norm = torch.nn.LayerNorm(64)
            self.qkv = torch.nn.Linear(64, 192)
            self.proj = torch.nn.Linear(64, 64)
            self.up = torch.nn.Linear(64, 256)
            self.down = torch.nn.Linear(256, 64)
            self.head = torch.nn.Linear(64 + 8, 10)

        def forward(self, tokens, image):
            x = self.embed(tokens)                                    # [4, 32, 64]
            q, k, v = self.qkv(self.norm(x)).split(64, dim=-1)
            heads = lambda t: t.view(4, 32, 4, 16).transpose(1, 2)   # [4, 4, 32, 16]
            attn = torch.nn.functional.scaled_dot_product_attention(heads(q), heads(k), heads(v))
            x = x + self.proj(attn.transpose(1, 2).reshape(4, 32, 64))
            x = x + self.down(torch.nn.functional.gelu(self.up(x)))
            scores = torch.softmax(torch.bmm(x, x.transpose(1, 2)) / 8.0, dim=-1)  # [4, 32, 32]
            x = torch.matmul(scores, x)
            pooled = self.conv(image).mean(dim=(2, 3))                # [4, 8]
            return self.head(torch.cat([x.mean(dim=1), pooled], dim=1))

    model = Block()
    tokens = torch.randint(0, 512, (4, 32))
    image = torch.randn(4, 3, 16, 16)
    labels = torch.randint(0, 10, (4,))
    return model, torch.optim.SGD(model.parameters(), lr=0.01), (tokens, image, labels)


def run_steps(model, opt, data, steps=STEPS):
    import torch
    tokens, image, labels = data
    for step in range(steps):
        with torch.profiler.record_function(f"ProfilerStep#{step}"):
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(model(tokens, image), labels)
            loss.backward()
            opt.step()


def record_kineto(out_dir):
    import torch
    import torch.utils.flop_counter
    model, opt, data = build_model()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True,
                                with_flops=True) as prof:
        run_steps(model, opt, data)
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "trace.json"
        prof.export_chrome_trace(str(raw))
        doc = json.loads(raw.read_text())
        doc["traceName"], doc["host_name"] = "trace.json", "host"  # where and on which machine: not kept
        target = out_dir / "cpu_train_flops.json.gz"
        with gzip.GzipFile(target, "wb", mtime=0) as dst:
            dst.write(json.dumps(doc).encode())
    # PyTorch's own FLOPs: per call from the profiler (keyed by the trace's External id), and per
    # aten operator for one more step under the counter the FLOPs formulas follow.
    per_call = [{"external_id": e.id, "name": e.name, "input_shapes": e.input_shapes, "flops": e.flops}
                for e in prof.events() if e.flops]
    counter = torch.utils.flop_counter.FlopCounterMode(display=False)
    with counter:
        run_steps(model, opt, data, steps=1)
    per_op = {str(op): n for op, n in counter.get_flop_counts()["Global"].items()}
    oracle = {"torch": torch.__version__, "steps": STEPS, "function_event_flops": per_call,
              "flop_counter_per_step": per_op, "flop_counter_total_per_step": counter.get_total_flops()}
    (out_dir / "cpu_train_flops.pytorch.json").write_text(json.dumps(oracle, indent=1) + "\n")
    events = json.loads(gzip.open(target).read())["traceEvents"]
    print(f"{target}: {len(events)} events; {len(per_call)} calls with PyTorch FLOPs, "
          f"{counter.get_total_flops()} FLOPs per step by flop_counter")


def emit_nvtx_child():
    """Runs inside `nsys profile`: the same loop under emit_nvtx(record_shapes=True)."""
    import torch
    if not torch.cuda.is_available():
        torch.cuda.synchronize = lambda *args, **kwargs: None  # nothing to wait for without a GPU
    model, opt, data = build_model()
    with torch.autograd.profiler.emit_nvtx(record_shapes=True):
        run_steps(model, opt, data)


def anonymize_export(path):
    """Removes from an export what describes the recording machine rather than the run: the
    environment, paths, host and user names, other processes' names. The events stay as recorded."""
    db = sqlite3.connect(path)
    db.execute("DELETE FROM META_DATA_CAPTURE WHERE name LIKE '%ENVIRONMENT_VARIABLE%'")
    for name, value in (("%:COMMAND", "python3"), ("%:ARGUMENT_0", "record_cpu_pytorch.py"), ("%:WORKING_DIR", "."),
                        ("DEVICE_DISPLAY_NAME", "host")):
        db.execute("UPDATE META_DATA_CAPTURE SET value = ? WHERE name LIKE ?", (value, name))
    db.execute("UPDATE META_DATA_EXPORT SET value = '' WHERE name LIKE 'EXPORT_PARAM_%PATH%' OR name = 'EXPORT_USER'")
    db.execute("UPDATE META_DATA_EXPORT SET value = 'host' WHERE name = 'EXPORT_HOST'")
    db.execute("UPDATE TARGET_INFO_SYSTEM_ENV SET value = '' WHERE name IN "
               "('DeviceEnvironment', 'TargetInstallDir', 'InjectionFilesStoragePath', 'EventLibSourcesInfo')")
    db.execute("UPDATE TARGET_INFO_SYSTEM_ENV SET value = 'host' WHERE name = 'Hostname'")
    # The profiled process only; its name without the interpreter's path.
    recorded = {pid for (pid,) in db.execute("SELECT DISTINCT globalTid / 16777216 * 16777216 FROM NVTX_EVENTS")}
    for (gpid,) in db.execute("SELECT globalPid FROM PROCESSES").fetchall():
        if gpid not in recorded:
            db.execute("DELETE FROM PROCESSES WHERE globalPid = ?", (gpid,))
    db.execute("UPDATE PROCESSES SET name = 'python3'")
    # Strings no event names: environment entries and paths of other processes, log files.
    for sid, value in db.execute("SELECT id, value FROM StringIds").fetchall():
        if "/" in value or "=" in value.split(" ")[0]:
            db.execute("UPDATE StringIds SET value = '' WHERE id = ?", (sid,))
    db.commit()
    db.execute("VACUUM")
    db.close()


def record_emit_nvtx(out_dir, nsys, importer):
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "emit_nvtx"
        script = Path(tmp) / "record_cpu_pytorch.py"
        shutil.copy(__file__, script)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, "LANG": "C.UTF-8",
               "CUDA_VISIBLE_DEVICES": ""}
        subprocess.run([nsys, "profile", "--trace=nvtx", "--sample=none", "--cpuctxsw=none", "--force-overwrite=true",
                        "-o", str(base), sys.executable, script.name, "--emit-nvtx-child"], check=True, cwd=tmp,
                       env=env)
        rep = base.with_suffix(".nsys-rep")
        if not rep.exists():  # an nsys without its host importer leaves the raw stream
            subprocess.run([importer, "-i", str(base.with_suffix(".qdstrm")), "-o", str(rep)], check=True)
        target = out_dir / "cpu_train_emit_nvtx.sqlite"
        subprocess.run([nsys, "export", "--type=sqlite", "--force-overwrite=true", "-o", str(target), str(rep)],
                       check=True)
    anonymize_export(target)
    print(f"{target}: {target.stat().st_size} bytes")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("tests/data/pytorch-cpu"))
    parser.add_argument("--nsys", default="nsys")
    parser.add_argument("--importer", default="QdstrmImporter")
    parser.add_argument("--emit-nvtx-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.emit_nvtx_child:
        emit_nvtx_child()
        return
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    args.out.mkdir(parents=True, exist_ok=True)
    record_kineto(args.out)
    record_emit_nvtx(args.out, args.nsys, args.importer)


if __name__ == "__main__":
    main()
