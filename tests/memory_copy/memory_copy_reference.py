#!/usr/bin/env python3
"""Independent reference values for the GPU memory and copy reports.

tests/memory_copy_report_test.cpp checks tracedoc's gpu_mem_sum, gpu_mem_step_sum, gpu_copy_sum and
gpu_copy_step_sum against the tables this script writes to tests/golden/memory_copy/. It shares no
code with tracedoc: the PyTorch traces are read with Python's json module (exact decimals, through
tests/kineto/reference.py's loader and time conversion), the nsys exports with Python's sqlite3.

Inputs:
  - every PyTorch trace under shared/traces/kineto with GPU `[memory]` events or memory copies;
  - every real nsys export under shared/traces/nsys with memory copies (none of them holds GPU
    memory events or ProfilerStep ranges);
  - tests/golden/memory_copy/synthetic_export.sql, a small export with both (built in memory here,
    with the SQLite library by the C++ test).

Usage (standard library only):
    python3 tests/memory_copy/memory_copy_reference.py [SHARED_DIR]
SHARED_DIR defaults to $TRACEDOC_SHARED, else ../shared next to the checkout. Output paths are fixed
relative to this script, so the committed files never name a machine path.

Definitions (the ones src/analysis/gpu_memory.h, copy_throughput.h and steps.h document):
  memory    per (process, device), device type > 0 (not the CPU) for PyTorch, host kinds (pageable,
            pinned) left out for nsys; events in time order, ties in file/row order. Allocated after an
            event = PyTorch's "Total Allocated" when present, else previous + delta; before the first
            event = its total - its bytes when it has a total, else 0. Peak over the start value and
            every event; its time = the first event reaching it (the window's first event when the
            start value is the peak).
  steps     ProfilerStep#N ranges (PyTorch's user_annotation ranges; in nsys exports closed NVTX ranges
            whose name starts with "ProfilerStep#"), read as windows [start, end): an event at `end`
            belongs to the next window.
            A process without steps is one window: for memory its first to its last event, for copies
            the span of its kernels, copies and memsets.
  copies    grouped per (process, device, copy kind, src kind, dst kind); throughput = bytes * 1e9 /
            summed ns; median over copies with a duration of bytes * 1e9 / ns.
  share     union of copy intervals clipped to the window; copies/bytes of copies starting in it.
"""

import importlib.util
import os
import re
import sqlite3
import statistics
import sys
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(os.path.dirname(HERE))
OUT_DIR = os.path.join(CHECKOUT, "tests", "golden", "memory_copy")
SYNTHETIC_SQL = os.path.join(OUT_DIR, "synthetic_export.sql")

_spec = importlib.util.spec_from_file_location("kineto_reference", os.path.join(CHECKOUT, "tests", "kineto", "reference.py"))
kref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kref)

NULL = "-"
WHOLE_TRACE = "(whole trace)"

# CopyKind and MemKind numbers (nsys's ENUM_CUDA_MEMCPY_OPER / ENUM_CUDA_MEM_KIND) and their labels.
COPY_LABELS = ["Unknown", "Host-to-Device", "Device-to-Host", "Host-to-Array", "Array-to-Host", "Array-to-Array",
               "Array-to-Device", "Device-to-Array", "Device-to-Device", "Host-to-Host", "Peer-to-Peer",
               "Unified Host-to-Device", "Unified Device-to-Host", "Unified Device-to-Device"]
MEM_LABELS = ["Pageable", "Pinned", "Device", "Array", "Managed", "Device Static", "Managed Static", "Unknown"]
KINETO_DIRECTIONS = ["HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"]
KINETO_DIRECTION_KIND = {"HtoD": 1, "DtoH": 2, "HtoA": 3, "AtoH": 4, "AtoA": 5, "AtoD": 6, "DtoA": 7, "DtoD": 8,
                         "HtoH": 9, "PtoP": 10}
KINETO_MEM_KIND = {"Pageable": 0, "Pinned": 1, "Device": 2, "Array": 3, "Managed": 4}
UNKNOWN_MEM = 7
CLASS_OF_KIND = {1: 0, 3: 0, 11: 0, 2: 1, 4: 1, 12: 1, 8: 2, 5: 2, 6: 2, 7: 2, 13: 2}  # else 3 (Other)

MEM_COLUMNS = ["source", "pid", "device", "events", "peak", "peak_time", "start_allocated", "end_allocated",
               "allocations", "frees", "bytes_allocated", "bytes_freed", "peak_reserved", "totals"]
MEM_STEP_COLUMNS = ["source", "pid", "device", "step", "start", "duration", "start_allocated", "end_allocated",
                    "peak", "peak_time", "allocations", "frees", "name"]
COPY_COLUMNS = ["source", "pid", "device", "copy_kind", "src_kind", "dst_kind", "count", "bytes", "total_ns",
                "throughput", "median_throughput"]
COPY_STEP_COLUMNS = ["source", "pid", "step", "start", "duration", "copies", "bytes", "copy_ns", "htod_ns",
                     "dtoh_ns", "dtod_ns", "other_ns", "name"]


def label(labels, k):
    return labels[k] if k is not None and 0 <= k < len(labels) else NULL


def step_number(name):
    """N of ProfilerStep#N: the digits after the first '#' (spaces allowed before them)."""
    m = re.match(r" *([0-9]+)", name[name.index("#") + 1:]) if "#" in name else None
    return int(m.group(1)) if m else NULL


# ---------------------------------------------------------------------------------------------
# Shared computations on plain lists.

def memory_rows(source, series, steps_by_pid):
    """series: {(pid, device): [(time, delta, total_alloc or None, total_reserved or None)] in table order}."""
    mem, mem_steps = [], []
    for (pid, device) in sorted(series):
        events = sorted(series[(pid, device)], key=lambda e: e[0])  # stable: ties keep table order
        first = events[0]
        recorded = first[2] is not None
        before = first[2] - first[1] if recorded else 0
        times, allocated = [], []
        cur = before
        for t, delta, total, _ in events:
            cur = total if total is not None else cur + delta
            times.append(t)
            allocated.append(cur)

        def window(lo, hi, start_value):
            peak, peak_time = start_value, (times[lo] if lo < hi else None)
            allocs = frees = bytes_alloc = bytes_freed = 0
            reserved = None
            end_value = start_value
            for i in range(lo, hi):
                d = events[i][1]
                if d > 0:
                    allocs += 1
                    bytes_alloc += d
                elif d < 0:
                    frees += 1
                    bytes_freed -= d
                if allocated[i] > peak:
                    peak, peak_time = allocated[i], times[i]
                r = events[i][3]
                if r is not None and (reserved is None or r > reserved):
                    reserved = r
                end_value = allocated[i]
            return dict(peak=peak, peak_time=peak_time, start=start_value, end=end_value, allocs=allocs,
                        frees=frees, bytes_alloc=bytes_alloc, bytes_freed=bytes_freed, reserved=reserved)

        w = window(0, len(events), before)
        mem.append([source, pid, device, len(events), w["peak"], w["peak_time"], w["start"], w["end"], w["allocs"],
                    w["frees"], w["bytes_alloc"], w["bytes_freed"], w["reserved"],
                    "allocator totals" if recorded else "event sizes"])
        steps = steps_by_pid.get(pid)
        if not steps:
            mem_steps.append([source, pid, device, NULL, times[0], times[-1] - times[0], w["start"], w["end"],
                              w["peak"], w["peak_time"], w["allocs"], w["frees"], WHOLE_TRACE])
            continue
        for start, end, name in steps:
            lo = sum(1 for t in times if t < start)
            hi = sum(1 for t in times if t < end)
            start_value = allocated[lo - 1] if lo > 0 else before
            s = window(lo, hi, start_value)
            mem_steps.append([source, pid, device, step_number(name), start, end - start, s["start"], s["end"],
                              s["peak"], s["peak_time"], s["allocs"], s["frees"], name])
    return mem, mem_steps


def union_within(intervals, start, end):
    clipped = sorted((max(s, start), min(e, end)) for s, e in intervals if min(e, end) > max(s, start))
    total, cur_s, cur_e = 0, None, None
    for s, e in clipped:
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def copy_rows(source, copies, steps_by_pid, gpu_span):
    """copies: [(pid, device, kind, src, dst, start, end, bytes)]; gpu_span: {pid: (first start, last end)}."""
    if not copies:
        return [], []  # no copy data at all: the reports have nothing to say (NoData), not zero rows
    groups = {}
    for pid, device, kind, src, dst, start, end, nbytes in copies:
        groups.setdefault((pid, device, kind, -1 if src is None else src, -1 if dst is None else dst), []).append(
            (max(0, end - start), nbytes, src, dst))
    out = []
    for key in sorted(groups, key=lambda k: (k[0], k[1], k[2], k[3] & 0xFF, k[4] & 0xFF)):  # NULL kinds sort last
        rows = groups[key]
        total_ns = sum(r[0] for r in rows)
        nbytes = sum(r[1] for r in rows)
        per_copy = [r[1] * 1e9 / r[0] for r in rows if r[0] > 0]
        out.append([source, key[0], key[1], label(COPY_LABELS, key[2]), label(MEM_LABELS, rows[0][2]),
                    label(MEM_LABELS, rows[0][3]), len(rows), nbytes, total_ns,
                    repr(nbytes * 1e9 / total_ns) if total_ns > 0 else NULL,
                    repr(statistics.median(per_copy)) if per_copy else NULL])

    steps_out = []
    pids = sorted(set(steps_by_pid) | {c[0] for c in copies})
    for pid in pids:
        mine = [c for c in copies if c[0] == pid]
        windows = [(s, e, name, False) for s, e, name in steps_by_pid.get(pid, [])]
        if not windows:
            if not mine:
                continue
            s, e = gpu_span[pid]
            windows = [(s, e, WHOLE_TRACE, True)]
        for start, end, name, whole in windows:
            started = [c for c in mine if start <= c[5] < end]
            by_class = [[], [], [], []]
            for c in mine:
                by_class[CLASS_OF_KIND.get(c[2], 3)].append((c[5], c[6]))
            steps_out.append([source, pid, NULL if whole else step_number(name), start, end - start, len(started),
                              sum(c[7] for c in started), union_within([(c[5], c[6]) for c in mine], start, end)]
                             + [union_within(iv, start, end) for iv in by_class] + [name])
    return out, steps_out


# ---------------------------------------------------------------------------------------------
# PyTorch traces.

def num_ns(v):
    return kref.to_ns(v) if kref.is_number(v) else None


def kineto_extent(ev):
    """(start, end) in ns of an X event as the reader keeps it, or None when it drops the event."""
    start = num_ns(ev.get("ts"))
    if start is None:
        return None
    dur = ev.get("dur")
    if kref.is_number(dur) and Decimal(dur) > kref.MAX_DUR_US:
        return None
    return start, start + (max(0, kref.to_ns(dur)) if kref.is_number(dur) else 0)


def describe_copy(name):
    kind = 0
    for d in KINETO_DIRECTIONS:
        if d in name:
            kind = KINETO_DIRECTION_KIND[d]
            break
    m = re.search(r"\(([^()]*)->([^()]*)\)", name)
    if not m:
        return kind, UNKNOWN_MEM, UNKNOWN_MEM
    return kind, KINETO_MEM_KIND.get(m.group(1).strip(), UNKNOWN_MEM), KINETO_MEM_KIND.get(m.group(2).strip(), UNKNOWN_MEM)


def kineto_tables(rel, doc):
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    series, steps, gpu_ops, launcher, cpu_pids = {}, {}, [], {}, set()
    for idx, ev in enumerate(events):
        if not isinstance(ev, dict):
            continue
        ph, cat, name = ev.get("ph"), ev.get("cat"), ev.get("name")
        name = name if isinstance(name, str) else ""
        args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
        if ph in ("i", "I") and name == "[memory]":
            t = num_ns(ev.get("ts"))
            if t is None:
                continue
            cpu_pids.add(ev.get("pid"))
            dtype, dev = args.get("Device Type"), args.get("Device Id")
            dtype = dtype if kref.is_int(dtype) else -1
            dev = dev if kref.is_int(dev) else -1
            if dtype <= 0 or dev < 0:
                continue
            b = args.get("Bytes")
            ta, tr = args.get("Total Allocated"), args.get("Total Reserved")
            series.setdefault((ev.get("pid"), dev), []).append(
                (t, b if kref.is_int(b) else 0, ta if kref.is_int(ta) else None, tr if kref.is_int(tr) else None))
            continue
        if ph != "X":
            continue
        ext = kineto_extent(ev)
        if ext is None:
            continue
        if cat in kref.API_CATS:
            cpu_pids.add(ev.get("pid"))
            c = args.get("correlation")
            if kref.is_int(c):
                launcher.setdefault(c, ev.get("pid"))
        elif cat in ("cpu_op", "user_annotation", "Operator") or "cat" not in ev:
            cpu_pids.add(ev.get("pid"))
            is_range = cat == "user_annotation" or (cat != "cpu_op" and "#" in name)
            if is_range and kref.STEP_RE.fullmatch(name):
                steps.setdefault(ev.get("pid"), []).append((ext[0], idx, ext[1], name))
        elif cat in kref.KERNEL_CATS or cat in kref.MEMCPY_CATS or cat in kref.MEMSET_CATS:
            dev = args.get("device")
            dev = dev if kref.is_int(dev) else (ev.get("pid") if kref.is_int(ev.get("pid")) else 0)
            c = args.get("correlation")
            b = args.get("bytes")
            gpu_ops.append((cat, c if kref.is_int(c) else None, dev, ext, b if kref.is_int(b) else 0, name))

    steps_by_pid = {pid: [(s, e, n) for s, _, e, n in sorted(v)] for pid, v in steps.items()}
    copies, span = [], {}
    for cat, corr, dev, (start, end), nbytes, name in gpu_ops:
        pid = launcher.get(corr)
        if pid is None:
            # Every shared trace has one CPU process; a trace with more would need the reader's
            # first-CPU-event rule, which this script does not model.
            if len(cpu_pids) != 1:
                raise SystemExit("%s: GPU work without a launching call and %d CPU processes" % (rel, len(cpu_pids)))
            pid = next(iter(cpu_pids))
        s, e = span.get(pid, (start, end))
        span[pid] = (min(s, start), max(e, end))
        if cat in kref.MEMCPY_CATS:
            kind, src, dst = describe_copy(name)
            copies.append((pid, dev, kind, src, dst, start, end, nbytes))
    return series, steps_by_pid, copies, span


# ---------------------------------------------------------------------------------------------
# nsys exports.

def nsys_tables(db):
    def has(table):
        return db.execute("SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?", (table,)).fetchone()[0] > 0

    series, steps = {}, {}
    if has("CUDA_GPU_MEMORY_USAGE_EVENTS"):
        for t, gpid, dev, nbytes, kind, op in db.execute(
                "SELECT start, globalPid, deviceId, bytes, memKind, memoryOperationType FROM CUDA_GPU_MEMORY_USAGE_EVENTS "
                "ORDER BY rowid"):
            if kind in (0, 1):
                continue
            delta = abs(nbytes) if op == 0 else -abs(nbytes) if op == 1 else 0
            series.setdefault((gpid, dev), []).append((t, delta, None, None))
    if has("NVTX_EVENTS"):
        sid = "(SELECT value FROM StringIds WHERE id = n.textId)" if has("StringIds") else "NULL"
        rows = db.execute("SELECT n.start, n.end, n.eventType, coalesce(%s, n.text), n.globalTid FROM NVTX_EVENTS n "
                          "ORDER BY n.rowid" % sid).fetchall()
        for row, (start, end, etype, name, gtid) in enumerate(rows):
            # nsys exports of PyTorch runs: any closed NVTX range whose name starts with ProfilerStep#.
            if end is not None and name and name.startswith("ProfilerStep#"):
                steps.setdefault(gtid & ~0xFFFFFF, []).append((start, row, end, name))
    steps_by_pid = {pid: [(s, e, n) for s, _, e, n in sorted(v)] for pid, v in steps.items()}

    copies, span = [], {}
    for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        if not has(table):
            continue
        for gpid, start, end in db.execute("SELECT globalPid, start, end FROM %s" % table):
            s, e = span.get(gpid, (start, end))
            span[gpid] = (min(s, start), max(e, end))
    if has("CUPTI_ACTIVITY_KIND_MEMCPY"):
        for row in db.execute("SELECT globalPid, deviceId, copyKind, srcKind, dstKind, start, end, bytes "
                              "FROM CUPTI_ACTIVITY_KIND_MEMCPY ORDER BY rowid"):
            copies.append(row)
    return series, steps_by_pid, copies, span


def nsys_pid(rows):
    """globalPid -> pid in the pid column (rows are keyed by globalPid so that they sort as tracedoc's)."""
    for r in rows:
        r[1] = (r[1] >> 24) & 0xFFFFFF
    return rows


# ---------------------------------------------------------------------------------------------

def write(name, columns, rows):
    path = os.path.join(OUT_DIR, name)
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        out.write("# Generated by tests/memory_copy/memory_copy_reference.py (Python json/sqlite3, independent of "
                  "tracedoc); do not edit. Sources: kineto/... and nsys/... relative to shared/traces, "
                  "synthetic = tests/golden/memory_copy/synthetic_export.sql. '-' = NULL.\n")
        out.write("\t".join(columns) + "\n")
        for r in rows:
            out.write("\t".join(NULL if v is None else str(v) for v in r) + "\n")
    print("wrote %d rows to %s" % (len(rows), os.path.relpath(path, CHECKOUT)))


def main(argv):
    shared = argv[1] if len(argv) > 1 else kref.default_shared_dir()
    traces = os.path.join(shared, "traces")
    if not os.path.isdir(os.path.join(traces, "kineto")):
        raise SystemExit("no traces/kineto under %s (pass the shared folder as argument)" % shared)
    mem, mem_steps, copy, copy_steps = [], [], [], []

    def add(source, tables, nsys):
        series, steps_by_pid, copies, span = tables
        m, ms = memory_rows(source, series, steps_by_pid)
        c, cs = copy_rows(source, copies, steps_by_pid, span)
        for rows, out in ((m, mem), (ms, mem_steps), (c, copy), (cs, copy_steps)):
            out.extend(nsys_pid(rows) if nsys else rows)

    for rel in kref.trace_files(traces):
        if not rel.startswith("kineto/"):
            continue  # torch113-cpu: CPU only
        doc = kref.load_json(os.path.join(traces, rel))
        if doc is None:
            continue
        tables = kineto_tables(rel, doc)
        if tables[0] or tables[2]:
            add(rel, tables, False)

    nsys_dir = os.path.join(traces, "nsys")
    for dirpath, dirs, files in sorted(os.walk(nsys_dir)):
        dirs.sort()
        if "oracles" in os.path.relpath(dirpath, nsys_dir).split(os.sep):
            continue
        for f in sorted(files):
            if not f.endswith(".sqlite"):
                continue
            path = os.path.join(dirpath, f)
            db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
            tables = nsys_tables(db)
            db.close()
            if tables[0] or tables[2]:
                add(os.path.relpath(path, traces).replace(os.sep, "/"), tables, True)

    db = sqlite3.connect(":memory:")
    with open(SYNTHETIC_SQL, encoding="utf-8") as f:
        db.executescript(f.read())
    add("synthetic", nsys_tables(db), True)

    write("gpu_mem.tsv", MEM_COLUMNS, mem)
    write("gpu_mem_steps.tsv", MEM_STEP_COLUMNS, mem_steps)
    write("gpu_copy.tsv", COPY_COLUMNS, copy)
    write("gpu_copy_steps.tsv", COPY_STEP_COLUMNS, copy_steps)


if __name__ == "__main__":
    main(sys.argv)
