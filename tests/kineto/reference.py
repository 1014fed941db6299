#!/usr/bin/env python3
"""Independent reference counts for the Kineto (PyTorch profiler) JSON reader.

tests/kineto_reference_test.cpp checks tracedoc's streaming C++ reader against the table this script
writes (tests/golden/kineto/reference.tsv). The point is independence: this side uses nothing but
Python's own json module with exact decimal numbers, so a bug in tracedoc's tokenizer, its fixed-point
time conversion or its category mapping shows up as a mismatch instead of being copied into the
expected values.

Usage (from anywhere; standard library only):
    python3 tests/kineto/reference.py [SHARED_DIR]
SHARED_DIR defaults to $TRACEDOC_SHARED, else ../shared next to the checkout (as the C++ tests do).
The output path is fixed, relative to this script, so the committed file never names a machine path.

Definitions below are the ones the C++ reader implements (src/ingest/kineto_reader.h); keep the two
in step, and regenerate the table when a definition changes on purpose.
"""

import decimal
import gzip
import json
import os
import re
import sys
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(os.path.dirname(HERE))
OUT_PATH = os.path.join(CHECKOUT, "tests", "golden", "kineto", "reference.tsv")

# Files under the scanned folders that are not Kineto traces (documented in the shared docs §6):
# TraceLens's capture metadata, HTA's execution-trace (ET) graph and its memory-timeline dump.
NOT_TRACES_EXACT = {"execution_details.json", "memory_timeline.raw.gz"}
NOT_TRACES_SUFFIX = ("_et.json.gz",)

COLUMNS = [
    "file", "events", "kernels", "kernel_total_ns", "memcpys", "memcpy_bytes", "memsets",
    "memset_bytes", "api_calls", "cpu_ops", "user_annotations", "gpu_user_annotations",
    "memory_events", "python_functions", "steps", "rank", "base_time_ns",
]

KERNEL_CATS = {"kernel", "Kernel"}               # E2+ lowercase, E1 (2021) capitalized
MEMCPY_CATS = {"gpu_memcpy", "Memcpy"}
MEMSET_CATS = {"gpu_memset", "Memset"}
API_CATS = {"cuda_runtime", "cuda_driver", "Runtime"}

# A week in µs: Kineto has written garbage durations (unfinished activities); such an event is
# dropped from every count rather than stretching a timeline over years.
MAX_DUR_US = Decimal(604800) * Decimal(10**6)

STEP_RE = re.compile(r"ProfilerStep#[0-9]+")     # used with fullmatch: no \d (Unicode) and no $ quirk
# rank-N, rank_N or rankN in the file name (HTA's rank-70.*.pt.trace.json.gz, TraceLens's
# capture_trace_rank_0, HTA's rank0.json); the file name only, never the folders above it.
RANK_IN_NAME_RE = re.compile(r"rank[-_]?([0-9]+)")

# Time arithmetic: the values are at most ~20 digits, far below this precision, so every product is
# exact; rounding is then explicit (half away from zero, which is decimal's ROUND_HALF_UP).
CTX = decimal.Context(prec=80, rounding=decimal.ROUND_HALF_UP)


def default_shared_dir():
    env = os.environ.get("TRACEDOC_SHARED")
    if env and os.path.isdir(env):
        return env
    return os.path.join(os.path.dirname(CHECKOUT), "shared")


def shared_dir():
    """The shared folder: the first command-line argument, else default_shared_dir()."""
    return sys.argv[1] if len(sys.argv) > 1 else default_shared_dir()


def to_ns(value):
    """µs number from the JSON (int or Decimal) -> int ns, rounded half away from zero."""
    scaled = CTX.multiply(Decimal(value), Decimal(1000))
    return int(scaled.quantize(Decimal(1), rounding=decimal.ROUND_HALF_UP, context=CTX))


def is_number(v):
    return isinstance(v, (int, Decimal)) and not isinstance(v, bool)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def load_json(path):
    """The parsed document, or None when Python cannot parse it (a row saying `invalid`)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    # Old Kineto wrote invalid UTF-8 in names; counts never depend on those bytes.
    text = raw.decode("utf-8", errors="replace")
    try:
        # strict=False: raw control characters inside strings (pytorch#130622) are accepted.
        return json.loads(text, parse_float=Decimal, strict=False)
    except json.JSONDecodeError:
        pass
    # TensorBoard's plugin (tb_plugin profiler/data.py) quotes a bare N/A that old Kineto wrote
    # as a value; do the same before giving up.
    patched = re.sub(r'(?<!")N/A(?!")', '"N/A"', text)
    if patched != text:
        try:
            return json.loads(patched, parse_float=Decimal, strict=False)
        except json.JSONDecodeError:
            pass
    return None


def tsv_cell(x):
    """A cell of a reference table; a name with a tab or line break would need escaping first."""
    s = str(x)
    if "\t" in s or "\n" in s:
        raise SystemExit("a name holds a tab or line break; escape it in the TSV first: %r" % s)
    return s


def write_reference_tsv(out_path, script, traces, columns, rows):
    """Writes a reference table as the C++ tests read it (test_support.h read_reference_tsv): how to
    regenerate it, one "# name = path" line per trace, the header, then the rows (lists of cells)."""
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    with open(out_path, "w", encoding="utf-8", newline="\n") as out:
        out.write("# generated by tests/kineto/%s (independent of tracedoc); regenerate:\n" % script)
        out.write("#   python3 tests/kineto/%s [SHARED_DIR]\n" % script)
        for name, rel in traces:
            out.write("# %s = %s\n" % (name, rel))
        out.write("\t".join(columns) + "\n")
        for r in rows:
            out.write("\t".join(tsv_cell(x) for x in r) + "\n")
    print("wrote %d rows to %s" % (len(rows), os.path.relpath(out_path, CHECKOUT)), file=sys.stderr)


def rank_of(doc, rel):
    info = doc.get("distributedInfo") if isinstance(doc, dict) else None
    if isinstance(info, dict) and is_int(info.get("rank")):
        return info["rank"]
    m = RANK_IN_NAME_RE.search(os.path.basename(rel))
    return int(m.group(1)) if m else -1


def arg_bytes(ev):
    args = ev.get("args")
    b = args.get("bytes") if isinstance(args, dict) else None
    return b if is_int(b) else 0


def summarize(doc, rel):
    """One TSV row (a dict keyed by COLUMNS) for a parsed trace document."""
    if isinstance(doc, dict):
        events = doc.get("traceEvents")
        base = doc.get("baseTimeNanoseconds")
        base = base if is_int(base) else 0
    else:
        events = doc  # PyTorch's legacy exporter: a bare event array
        base = 0
    if not isinstance(events, list):
        raise SystemExit("%s: no event array; add it to the not-a-trace list if that is right" % rel)

    row = {c: 0 for c in COLUMNS}
    row["file"] = rel
    row["events"] = len(events)
    row["rank"] = rank_of(doc, rel)
    row["base_time_ns"] = base

    for ev in events:
        if not isinstance(ev, dict):
            continue
        ph = ev.get("ph")
        cat = ev.get("cat")
        has_cat = "cat" in ev
        name = ev.get("name")
        name = name if isinstance(name, str) else ""

        if ph == "i" and name == "[memory]":
            row["memory_events"] += 1
            continue

        dur_ns = 0
        if ph == "X":
            # Dropped X events vanish from every count, python_function included.
            if not is_number(ev.get("ts")):
                continue
            dur = ev.get("dur")
            if is_number(dur):
                if Decimal(dur) > MAX_DUR_US:
                    continue
                dur_ns = max(0, to_ns(dur))  # negative durations are kept as 0

        if cat == "python_function":
            row["python_functions"] += 1  # any phase
            continue
        if ph != "X":
            continue

        if cat in KERNEL_CATS:
            row["kernels"] += 1
            row["kernel_total_ns"] += dur_ns
        elif cat in MEMCPY_CATS:
            row["memcpys"] += 1
            row["memcpy_bytes"] += arg_bytes(ev)
        elif cat in MEMSET_CATS:
            row["memsets"] += 1
            row["memset_bytes"] += arg_bytes(ev)
        elif cat in API_CATS:
            row["api_calls"] += 1
        elif cat == "cpu_op":
            row["cpu_ops"] += 1
        elif cat == "user_annotation":
            row["user_annotations"] += 1
            if STEP_RE.fullmatch(name):
                row["steps"] += 1
        elif cat == "gpu_user_annotation":
            row["gpu_user_annotations"] += 1
        elif cat == "Operator" or not has_cat:
            # 2021 (E1) files and the legacy bare array have no user_annotation category: the
            # record_function ranges are the names with a '#' (ProfilerStep#5, Optimizer.step#SGD.step,
            # enumerate(DataLoader)#..., ## backward ##), everything else an operator.
            if "#" in name:
                row["user_annotations"] += 1
                if STEP_RE.fullmatch(name):
                    row["steps"] += 1
            else:
                row["cpu_ops"] += 1
        # Anything else (Trace, overhead, cuda_sync, flows' categories...) is not counted here.
    return row


def is_candidate(name):
    if name in NOT_TRACES_EXACT or name.endswith(NOT_TRACES_SUFFIX):
        return False
    return name.endswith(".json") or name.endswith(".json.gz")


def trace_files(traces_dir):
    """Paths relative to traces_dir, '/'-separated, of every trace the table covers."""
    out = []
    kineto = os.path.join(traces_dir, "kineto")
    for dirpath, _dirs, files in os.walk(kineto):
        for f in files:
            if is_candidate(f):
                out.append(os.path.relpath(os.path.join(dirpath, f), traces_dir))
    legacy = os.path.join(traces_dir, "torch113-cpu")
    if os.path.isdir(legacy):
        for f in os.listdir(legacy):
            if f.endswith(".json") and is_candidate(f):
                out.append(os.path.join("torch113-cpu", f))
    return sorted(p.replace(os.sep, "/") for p in out)


def main(argv):
    shared = argv[1] if len(argv) > 1 else default_shared_dir()
    traces_dir = os.path.join(shared, "traces")
    if not os.path.isdir(os.path.join(traces_dir, "kineto")):
        raise SystemExit("no traces/kineto under %s (pass the shared folder as argument)" % shared)

    rows = []
    for rel in trace_files(traces_dir):
        doc = load_json(os.path.join(traces_dir, rel))
        if doc is None:
            rows.append([rel, "invalid"] + ["-"] * (len(COLUMNS) - 2))
            continue
        r = summarize(doc, rel)
        rows.append([str(r[c]) for c in COLUMNS])

    os.makedirs(os.path.dirname(OUT_PATH), exist_ok=True)
    with open(OUT_PATH, "w", encoding="utf-8", newline="\n") as out:
        out.write("# Generated by tests/kineto/reference.py (Python json + decimal, independent of tracedoc); "
                  "do not edit. Regenerate: python3 tests/kineto/reference.py [SHARED_DIR]. "
                  "Paths are relative to shared/traces; 'invalid' = Python cannot parse the file.\n")
        out.write("\t".join(COLUMNS) + "\n")
        for r in rows:
            out.write("\t".join(r) + "\n")
    print("wrote %d rows to %s" % (len(rows), os.path.relpath(OUT_PATH, CHECKOUT)))


if __name__ == "__main__":
    main(sys.argv)
