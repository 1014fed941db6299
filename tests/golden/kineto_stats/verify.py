#!/usr/bin/env python3
"""Independent check of the kineto_stats goldens, recomputed from the raw Kineto JSON.

Usage: python3 verify.py [SHARED_DIR]      (default: ../shared next to the checkout, or $TRACEDOC_SHARED)
Exits non-zero on any mismatch; prints, per golden, how many cells it compared.

Nothing here comes from tracedoc: the JSON is read with the standard library (floats as Decimal, so
ts/dur * 1000 is the exact ns value), events are mapped the way kineto_reader.h documents it, and
every statistic is computed in exact decimal arithmetic, then rounded as nsys prints it
(times in ns, Avg/Med/StdDev to 1 decimal, sizes in MB = 10^6 B to 3 decimals).
An exact tie (x.x5 at the printed precision) is accepted either way: nsys/SQLite round the binary
double, whose value at a tie depends on representation; such cells are counted and reported.

Model mapping (kineto_reader.h):
  kernel / Kernel -> kernels; gpu_memcpy / Memcpy -> memcpys (direction from the name's HtoD etc.);
  gpu_memset / Memset -> memsets; cuda_runtime / cuda_driver / Runtime -> CUDA API calls;
  user_annotation -> NVTX push/pop ranges; in 2021 traces (no user_annotation category) the
  Operator events whose name has a '#' (ProfilerStep#N, ...) are those ranges.
Launch join (nsys's correlation join): a GPU operation belongs to the API calls with its
correlation id in the process of the earliest such call (Kineto GPU events carry the device, not
the CPU process). NVTX projection: a GPU op belongs to every range of the launching call's thread
with range.start <= call.start and call.end <= range.end.
Truncated goldens (truncated.list, written by regenerate.sh: header and first 200 rows of a report
over ~300 KB) are checked row by row as a prefix: every kept row must be right, and for
cuda_gpu_trace the kept rows must be the earliest operations and the full row count must match.
"""
import csv
import gzip
import json
import os
import sys
from collections import Counter, defaultdict
from decimal import ROUND_HALF_DOWN, ROUND_HALF_UP, Decimal, getcontext

getcontext().prec = 60

HERE = os.path.dirname(os.path.abspath(__file__))
# The same list as regenerate.sh and kCases in tests/kineto_stats_golden_test.cpp.
CASES = [
    ("resnet50_e1", "kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"),
    ("hta_diff_e2", "kineto/HolisticTraceAnalysis/tests/data/trace_diff/test/test.json.gz"),
    ("alexnet_e3", "kineto/HolisticTraceAnalysis/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"),
    ("nccl_e5", "kineto/HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz"),
    ("bert_mi300", "kineto/TraceLens/tests/traces/mi300/gaunernst_bert-small-uncased__1016001.json.gz"),
    ("vllm_graph", "kineto/TraceLens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz"),
]
# nsys's ENUM_CUDA_MEMCPY_OPER labels for the direction token of a Kineto memcpy name.
DIRECTIONS = {"HtoD": "Host-to-Device", "DtoH": "Device-to-Host", "HtoA": "Host-to-Array", "AtoH": "Array-to-Host",
              "AtoA": "Array-to-Array", "AtoD": "Array-to-Device", "DtoA": "Device-to-Array",
              "DtoD": "Device-to-Device", "HtoH": "Host-to-Host", "PtoP": "Peer-to-Peer"}
KERNEL, MEMCPY, MEMSET, API = {"kernel", "Kernel"}, {"gpu_memcpy", "Memcpy"}, {"gpu_memset", "Memset"}, \
    {"cuda_runtime", "cuda_driver", "Runtime"}


def ns(v):
    x = Decimal(str(v)) * 1000
    assert x == x.to_integral_value(), f"timestamp {v} is not a whole number of ns"
    return int(x)


# ---- Reading the trace ---------------------------------------------------------------------------

class Trace:
    def __init__(self, path):
        with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
            doc = json.load(f, parse_float=Decimal)
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        self.kernels, self.memops, self.api, self.ranges = [], [], [], []
        era1 = any(e.get("cat") in ("Kernel", "Runtime", "Operator") for e in events)
        for e in events:
            if e.get("ph") != "X":
                continue
            cat, name, args = e.get("cat"), e.get("name", ""), e.get("args", {})
            s = ns(e["ts"])
            d = max(0, ns(e.get("dur", 0)))
            ev = dict(s=s, e=s + d, d=d, name=name, corr=args.get("correlation"),
                      pid=str(e.get("pid")), tid=str(e.get("tid")))
            if cat in KERNEL:
                ev["grid"], ev["block"] = args.get("grid", [0, 0, 0]), args.get("block", [0, 0, 0])
                ev["stream"] = args.get("stream")
                self.kernels.append(ev)
            elif cat in MEMCPY or cat in MEMSET:
                if cat in MEMSET:
                    ev["op"] = "[CUDA memset]"
                else:
                    token = next((t for t in DIRECTIONS if t in name), None)
                    ev["op"] = f"[CUDA memcpy {DIRECTIONS.get(token, 'Unknown')}]"
                ev["bytes"], ev["stream"] = int(args.get("bytes", 0)), args.get("stream")
                self.memops.append(ev)
            elif cat in API:
                self.api.append(ev)
            elif cat == "user_annotation" or (era1 and cat in ("Operator", None) and "#" in name):
                self.ranges.append(ev)
        # Launch join: correlation id -> calls of the process of the earliest call with it.
        by_corr = defaultdict(list)
        for a in sorted(self.api, key=lambda a: a["s"]):
            if a["corr"] is not None:
                by_corr[a["corr"]].append(a)
        self.calls = {c: [a for a in l if a["pid"] == l[0]["pid"]] for c, l in by_corr.items()}

    def launchers(self, op):
        return self.calls.get(op["corr"], []) if op["corr"] is not None else []

    def enclosing(self, call):
        th = (call["pid"], call["tid"])
        return [i for i, r in enumerate(self.ranges)
                if (r["pid"], r["tid"]) == th and r["s"] <= call["s"] and call["e"] <= r["e"]]


def api_name(n):  # nsys drops a "_v1234"-style version suffix
    return n[:-6] if len(n) >= 6 and n[-6:-4] == "_v" else n


# ---- Exact statistics ----------------------------------------------------------------------------

def stats(values, scale=1):
    v = sorted(values)
    n = len(v)
    total = sum(v)
    mean = Decimal(total) / n
    med = Decimal(v[n // 2]) if n % 2 else Decimal(v[n // 2 - 1] + v[n // 2]) / 2
    sd = (sum((Decimal(x) - mean) ** 2 for x in v) / (n - 1)).sqrt() if n > 1 else Decimal(0)
    s = Decimal(scale)
    return dict(count=n, total=Decimal(total) / s, avg=mean / s, med=med / s, min=Decimal(v[0]) / s,
                max=Decimal(v[-1]) / s, sd=sd / s)


class Checker:
    def __init__(self):
        self.cells = Counter()   # per report
        self.ties = 0
        self.failures = []

    def num(self, where, col, text, exact, places=None):
        """Golden cell `text` equals `exact` (rounded to `places` decimals, ties either way)."""
        self.cells[where[1]] += 1
        try:
            got = Decimal(text)
        except Exception:
            got = None
        if places is None:
            if got is not None and got == exact:
                return
        else:
            q = Decimal(1).scaleb(-places)
            if got is not None and got == exact.quantize(q, ROUND_HALF_UP):
                return
            tie = (exact * 10 ** places) % 1 == Decimal("0.5")
            if got is not None and tie and got == exact.quantize(q, ROUND_HALF_DOWN):
                self.ties += 1
                return
        self.failures.append(f"{where[0]}.{where[1]}.csv row {where[2]!r} column {col}: golden {text!r}, "
                             f"expected {exact}")

    def text(self, where, col, text, exact):
        self.cells[where[1]] += 1
        if text != exact:
            self.failures.append(f"{where[0]}.{where[1]}.csv row {where[2]!r} column {col}: golden {text!r}, "
                                 f"expected {exact!r}")

    def fail(self, name, report, message):
        self.failures.append(f"{name}.{report}.csv: {message}")


def read_golden(name, report):
    with open(os.path.join(HERE, f"{name}.{report}.csv"), newline="") as f:
        rows = list(csv.reader(f))
    return (rows[0], [dict(zip(rows[0], r)) for r in rows[1:]]) if rows else ([], [])


def check_keys(chk, name, report, golden_keys, expected_keys, truncated):
    """Every golden row is an expected group; all groups are there unless the golden is a prefix."""
    extra = set(golden_keys) - set(expected_keys)
    if extra:
        chk.fail(name, report, f"rows not expected: {sorted(extra, key=str)[:3]}")
    if len(golden_keys) != len(set(golden_keys)):
        chk.fail(name, report, "duplicate rows")
    if not truncated and set(golden_keys) != set(expected_keys):
        chk.fail(name, report, f"missing rows: {sorted(set(expected_keys) - set(golden_keys), key=str)[:3]}")


def check_summary(chk, name, report, rows, groups, key_of, label_of, scale=1, places=1, time_pct=True,
                  count_col="Instances", unit="ns", truncated=False):
    """A time (or size) summary: one golden row per group of values, sorted by total descending."""
    check_keys(chk, name, report, [key_of(r) for r in rows], list(groups), truncated)
    grand = sum(sum(v) for v in groups.values())
    last = None
    for r in rows:
        k = key_of(r)
        if k not in groups:
            continue
        where = (name, report, label_of(k))
        s = stats(groups[k], scale)
        exact_places = 3 if scale != 1 else None  # totals, min, max: exact integers in ns
        chk.num(where, "Count", r[count_col], Decimal(s["count"]))
        total_col = f"Total ({unit})" if unit == "MB" else "Total Time (ns)"
        chk.num(where, total_col, r[total_col], s["total"], exact_places)
        chk.num(where, "Min", r[f"Min ({unit})"], s["min"], exact_places)
        chk.num(where, "Max", r[f"Max ({unit})"], s["max"], exact_places)
        chk.num(where, "Med", r[f"Med ({unit})"], s["med"], places)
        chk.num(where, "Avg", r[f"Avg ({unit})"], s["avg"], places)
        chk.num(where, "StdDev", r[f"StdDev ({unit})"], s["sd"], places)
        if time_pct:
            chk.num(where, "Time (%)", r["Time (%)"], Decimal(sum(groups[k])) * 100 / grand, 1)
        if last is not None and s["total"] > last:
            chk.fail(name, report, f"row {label_of(k)!r} is out of order (totals must not increase)")
        last = s["total"]


# ---- The reports ---------------------------------------------------------------------------------

def verify_case(chk, name, t, truncated):
    def tr(report):  # the full row count of a truncated golden, else 0
        return truncated.get(report, 0)

    # cuda_gpu_kern_sum / _gb_sum: kernel durations per name (and grid/block).
    _, rows = read_golden(name, "cuda_gpu_kern_sum")
    g = defaultdict(list)
    for k in t.kernels:
        g[k["name"]].append(k["d"])
    check_summary(chk, name, "cuda_gpu_kern_sum", rows, g, lambda r: r["Name"], str, truncated=tr("cuda_gpu_kern_sum"))

    def xyz(v):
        return "%4d %4d %4d" % tuple(int(x) for x in v)
    _, rows = read_golden(name, "cuda_gpu_kern_gb_sum")
    g = defaultdict(list)
    for k in t.kernels:
        g[(xyz(k["grid"]), xyz(k["block"]), k["name"])].append(k["d"])
    check_summary(chk, name, "cuda_gpu_kern_gb_sum", rows, g, lambda r: (r["GridXYZ"], r["BlockXYZ"], r["Name"]),
                  str, truncated=tr("cuda_gpu_kern_gb_sum"))

    # Memory operations by direction: durations, and sizes in MB.
    g_time, g_size = defaultdict(list), defaultdict(list)
    for m in t.memops:
        g_time[m["op"]].append(m["d"])
        g_size[m["op"]].append(m["bytes"])
    _, rows = read_golden(name, "cuda_gpu_mem_time_sum")
    check_summary(chk, name, "cuda_gpu_mem_time_sum", rows, g_time, lambda r: r["Operation"], str, count_col="Count",
                  truncated=tr("cuda_gpu_mem_time_sum"))
    _, rows = read_golden(name, "cuda_gpu_mem_size_sum")
    check_summary(chk, name, "cuda_gpu_mem_size_sum", rows, g_size, lambda r: r["Operation"], str, scale=10 ** 6,
                  places=3, time_pct=False, count_col="Count", unit="MB", truncated=tr("cuda_gpu_mem_size_sum"))

    # cuda_api_sum: call durations per API name.
    _, rows = read_golden(name, "cuda_api_sum")
    g = defaultdict(list)
    for a in t.api:
        g[api_name(a["name"])].append(a["d"])
    check_summary(chk, name, "cuda_api_sum", rows, g, lambda r: r["Name"], str, count_col="Num Calls",
                  truncated=tr("cuda_api_sum"))

    verify_gpu_trace(chk, name, t, tr("cuda_gpu_trace"))
    verify_kern_exec(chk, name, t, tr("cuda_kern_exec_sum"))

    # nvtx_sum: range durations per name.
    _, rows = read_golden(name, "nvtx_sum")
    g = defaultdict(list)
    for r in t.ranges:
        g[("PushPop", r["name"])].append(r["d"])
    check_summary(chk, name, "nvtx_sum", rows, g, lambda r: (r["Style"], r["Range"]), lambda k: k[1],
                  truncated=tr("nvtx_sum"))

    verify_projection(chk, name, t, tr)


def verify_gpu_trace(chk, name, t, truncated):
    """Each golden row is one GPU operation (matched on start, correlation and name), in start order."""
    report = "cuda_gpu_trace"
    _, rows = read_golden(name, report)
    ops = defaultdict(list)
    for o in t.kernels + t.memops:
        ops[(o["s"], str(o["corr"]), o["op"] if "op" in o else o["name"])].append(o)
    prev = None
    for r in rows:
        key = (int(r["Start (ns)"]), r["CorrId"], r["Name"])
        where = (name, report, f"start {key[0]} corr {key[1]}")
        chk.cells[report] += 3
        if not ops.get(key):
            chk.fail(name, report, f"no GPU operation {key}")
            continue
        o = ops[key].pop(0)
        if prev is not None and key[0] < prev:
            chk.fail(name, report, f"row {where[2]} is out of start order")
        prev = key[0]
        chk.num(where, "Duration", r["Duration (ns)"], Decimal(o["d"]))
        chk.num(where, "Strm", r["Strm"], Decimal(int(o["stream"])))
        if "op" in o:
            chk.num(where, "Bytes (MB)", r["Bytes (MB)"], Decimal(o["bytes"]) / 10 ** 6, 3)
            # nsys's SQL: bytes * (1000000000 / duration) in integer arithmetic, shown in MB/s.
            if o["d"]:
                chk.num(where, "Throughput", r["Throughput (MB/s)"], Decimal(o["bytes"] * (10 ** 9 // o["d"])) / 10 ** 6, 3)
        else:
            for col, v in zip(("GrdX", "GrdY", "GrdZ", "BlkX", "BlkY", "BlkZ"), list(o["grid"]) + list(o["block"])):
                chk.num(where, col, r[col], Decimal(int(v)))
    left = [o for l in ops.values() for o in l]
    if not truncated and left:
        chk.fail(name, report, f"{len(left)} GPU operations have no row")
    if truncated and rows and any(o["s"] < int(rows[-1]["Start (ns)"]) for o in left):
        chk.fail(name, report, "the kept rows are not the earliest operations")
    if truncated and len(left) + len(rows) != truncated:
        chk.fail(name, report, f"full row count {truncated} (truncated.list), expected {len(left) + len(rows)}")


def verify_kern_exec(chk, name, t, truncated):
    """Per (API name, kernel name): launches (kernel x joined call), queued ones, kernel/API min/max."""
    report = "cuda_kern_exec_sum"
    _, rows = read_golden(name, report)
    exp = defaultdict(lambda: dict(count=0, q=0, k=[], a=[]))
    for k in t.kernels:
        for a in t.launchers(k):
            e = exp[(api_name(a["name"]), k["name"])]
            e["count"] += 1
            e["q"] += k["s"] >= a["e"]  # nsys: queue time is NULL when the kernel starts before the call ends
            e["k"].append(k["d"])
            e["a"].append(a["d"])
    got = defaultdict(lambda: dict(count=0, q=0, kmin=[], kmax=[], amin=[], amax=[]))
    for r in rows:  # rows are per (PID, TID, DevId, API, kernel): add up over threads and devices
        x = got[(r["API Name"], r["Kernel Name"])]
        x["count"] += int(r["Count"])
        x["q"] += int(r["QCount"])
        for c, col in (("kmin", "KMin (ns)"), ("kmax", "KMax (ns)"), ("amin", "AMin (ns)"), ("amax", "AMax (ns)")):
            x[c].append(int(r[col]))
    check_keys(chk, name, report, list(got), list(exp), truncated)
    for key, x in got.items():
        if key not in exp:
            continue
        e, where = exp[key], (name, report, f"{key[0]} / {key[1][:60]}")
        chk.num(where, "Count", x["count"], Decimal(e["count"]))
        chk.num(where, "QCount", x["q"], Decimal(e["q"]))
        chk.num(where, "KMin", min(x["kmin"]), Decimal(min(e["k"])))
        chk.num(where, "KMax", max(x["kmax"]), Decimal(max(e["k"])))
        chk.num(where, "AMin", min(x["amin"]), Decimal(min(e["a"])))
        chk.num(where, "AMax", max(x["amax"]), Decimal(max(e["a"])))


def verify_projection(chk, name, t, tr):
    """nvtx_kern_sum and nvtx_gpu_proj_sum: GPU operations of each range via their launching calls.

    Both follow nsys's SQL (its nvtx_kern_sum / nvtx_gpu_proj_trace scripts): one join row per
    (operation, launching call, enclosing range), a NULL range where the call is in none;
    nvtx_kern_sum counts count(DISTINCT range) and count(DISTINCT kernel) but sums durations over the
    rows (a kernel inside two nested ranges of one name adds its duration twice); the projection
    counts count(DISTINCT correlationId) as "GPU Ops" (a graph launch is one) and spans
    min(op.start)..max(op.end).
    """
    ops_of_range = defaultdict(list)   # range index -> GPU ops (kernels and memory operations)
    kern_rows = defaultdict(list)      # (range name or '', kernel name) -> [(range index, kernel index, duration)]
    for n, o in enumerate(t.kernels + t.memops):
        calls = t.launchers(o)
        for i in sorted({i for a in calls for i in t.enclosing(a)}):
            ops_of_range[i].append(o)
        if "op" in o:
            continue
        for a in calls or [None]:
            for i in (t.enclosing(a) if a else []) or [None]:
                kern_rows[(t.ranges[i]["name"] if i is not None else "", o["name"])].append((i, n, o["d"]))

    report = "nvtx_kern_sum"
    _, rows = read_golden(name, report)
    got = defaultdict(lambda: dict(nvtx=0, kern=0, total=0, mn=[], mx=[]))
    for r in rows:  # per (range, style, PID, TID, kernel): add up over threads
        x = got[(r["NVTX Range"], r["Kernel Name"])]
        x["nvtx"] += int(r["NVTX Inst"])
        x["kern"] += int(r["Kern Inst"])
        x["total"] += int(r["Total Time (ns)"])
        x["mn"].append(int(r["Min (ns)"]))
        x["mx"].append(int(r["Max (ns)"]))
    check_keys(chk, name, report, list(got), list(kern_rows), tr(report))
    for key, x in got.items():
        if key not in kern_rows:
            continue
        jr, where = kern_rows[key], (name, report, f"{key[0][:40]} / {key[1][:60]}")
        chk.num(where, "NVTX Inst", x["nvtx"], Decimal(len({i for i, _, _ in jr if i is not None})))
        chk.num(where, "Kern Inst", x["kern"], Decimal(len({k for _, k, _ in jr})))
        chk.num(where, "Total Time", x["total"], Decimal(sum(d for _, _, d in jr)))
        chk.num(where, "Min", min(x["mn"]), Decimal(min(d for _, _, d in jr)))
        chk.num(where, "Max", max(x["mx"]), Decimal(max(d for _, _, d in jr)))

    # nvtx_gpu_proj_sum: per range instance with GPU operations, the projection is the span from
    # its first operation's start to its last operation's end.
    report = "nvtx_gpu_proj_sum"
    _, rows = read_golden(name, report)
    groups = defaultdict(lambda: dict(proj=[], range_time=0, ops=0))
    for i, ops in ops_of_range.items():
        g = groups[(t.ranges[i]["name"], "PushPop")]
        g["proj"].append(max(o["e"] for o in ops) - min(o["s"] for o in ops))
        g["range_time"] += t.ranges[i]["d"]
        g["ops"] += len({o["corr"] for o in ops})
    keys = [(r["Range"], r["Style"]) for r in rows]
    check_keys(chk, name, report, keys, list(groups), tr(report))
    for key, r in zip(keys, rows):
        if key not in groups:
            continue
        g, where = groups[key], (name, report, key[0][:60])
        s = stats(g["proj"])
        chk.num(where, "Range Instances", r["Range Instances"], Decimal(s["count"]))
        chk.num(where, "Total Range Time", r["Total Range Time (ns)"], Decimal(g["range_time"]))
        chk.num(where, "Total GPU Ops", r["Total GPU Ops"], Decimal(g["ops"]))
        chk.num(where, "Avg GPU Ops", r["Avg GPU Ops"], Decimal(g["ops"]) / s["count"], 1)
        chk.num(where, "Total Proj Time", r["Total Proj Time (ns)"], s["total"])
        chk.num(where, "Proj Min", r["Proj Min (ns)"], s["min"])
        chk.num(where, "Proj Max", r["Proj Max (ns)"], s["max"])
        chk.num(where, "Proj Med", r["Proj Med (ns)"], s["med"], 1)
        chk.num(where, "Proj Avg", r["Proj Avg (ns)"], s["avg"], 1)
        chk.num(where, "Proj StdDev", r["Proj StdDev (ns)"], s["sd"], 1)


def main():
    root = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
    shared = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("TRACEDOC_SHARED", os.path.join(root, "..", "shared"))
    truncated = defaultdict(dict)  # name -> report -> full row count
    with open(os.path.join(HERE, "truncated.list")) as f:
        for line in f:
            if line.strip():
                n, report, full = line.split()
                truncated[n][report] = int(full)
    chk = Checker()
    for name, path in CASES:
        before, failed = sum(chk.cells.values()), len(chk.failures)
        t = Trace(os.path.join(shared, "traces", path))
        verify_case(chk, name, t, truncated[name])
        print(f"{name}: {len(t.kernels)} kernels, {len(t.memops)} memory ops, {len(t.api)} API calls, "
              f"{len(t.ranges)} ranges; {sum(chk.cells.values()) - before} cells, "
              f"{len(chk.failures) - failed} mismatches")
    print("cells compared per report:")
    for report, n in sorted(chk.cells.items()):
        print(f"  {report:24} {n}")
    print(f"total {sum(chk.cells.values())} cells, {chk.ties} exact rounding ties accepted either way, "
          f"{len(chk.failures)} mismatches")
    for f in chk.failures[:50]:
        print("MISMATCH", f)
    return 1 if chk.failures else 0


if __name__ == "__main__":
    sys.exit(main())
