#!/usr/bin/env bash
# Builds the seed corpora of the fuzz targets into fuzz/corpus/<target>/ (gitignored) from:
#   - the real traces in ../shared/traces next to the checkout (or $TRACEDOC_SHARED/traces): they
#     are read, never copied into the repository; what lands in fuzz/corpus/ is rebuilt here;
#   - this repository's own small inputs (examples/*.sqlite, the SQL scripts of tests/golden/).
# Without the shared traces it still builds the corpora from the repository's inputs alone.
#
# Why small seeds: libFuzzer's speed is executions per second, and its mutations are cheap on a few
# KB and wasted on megabytes. So besides the small real files, every real trace also gives a slice
# (its top-level members, the first events, and a few events of every (category, phase) pair it
# has), and every nsys export a trimmed copy (the first rows of every table, 512-byte pages so that
# b-trees have interior pages and long strings spill onto overflow pages). Hand-written edge cases
# (legacy bare arrays, N/A, trailing commas, truncations, concatenated gzip members) complete them.
#
# Usage: fuzz/make_seed_corpus.sh            (needs python3 and gzip; the corpora are replaced)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
shared=${TRACEDOC_SHARED:-$(cd .. && pwd)/shared}
traces=$shared/traces
out=$repo/fuzz/corpus
json_dir=$out/fuzz_kineto_json
gz_dir=$out/fuzz_kineto_gzip
sqlite_dir=$out/fuzz_nsys_sqlite
capture_dir=$out/fuzz_capture
analyses_dir=$out/fuzz_analyses
ncu_dir=$out/fuzz_ncu_report
# The normal build, whose `tracedoc capture` and NVTX test program give real .tdcap seeds when built.
build=${TRACEDOC_BUILD:-$repo/build}

# Limits: a JSON seed at most 1 MB uncompressed, a gzip seed at most 256 KB, an nsys export 5 MB.
max_json=$((1024 * 1024))
max_gz=$((256 * 1024))
max_sqlite=$((5 * 1024 * 1024))

rm -rf "$json_dir" "$gz_dir" "$sqlite_dir" "$capture_dir" "$analyses_dir" "$ncu_dir"
mkdir -p "$json_dir" "$gz_dir" "$sqlite_dir" "$capture_dir" "$analyses_dir" "$ncu_dir"

if [[ -d $traces ]]; then
  echo "seeds from $traces"
else
  echo "no shared traces at $traces: seeds from this repository only" >&2
  traces=
fi

# A corpus file name from a path under the traces folder: kineto/TraceLens/x/y.json -> kineto_TraceLens_x_y.json
seed_name() { local rel=${1#"$traces"/}; echo "${rel//\//_}"; }

# ---------------------------------------------------------------------------------------------
# Kineto JSON and gzip: the small real files as they are
if [[ -n $traces ]]; then
  while IFS= read -r -d '' f; do
    name=$(seed_name "$f")
    case $f in
      *.json.gz)
        size=$(gzip -dc "$f" | wc -c)
        if (( size <= max_json )); then gzip -dc "$f" > "$json_dir/${name%.gz}"; fi
        if (( $(stat -c %s "$f") <= max_gz )); then cp "$f" "$gz_dir/$name"; fi
        ;;
      *.json)
        if (( $(stat -c %s "$f") <= max_json )); then cp "$f" "$json_dir/$name"; fi
        ;;
    esac
  done < <(find "$traces/kineto" "$traces/torch113-cpu" -type f \( -name '*.json' -o -name '*.json.gz' \) -print0 | sort -z)
fi

# Slices of every real trace (also the big ones): small, and with every kind of event the file has.
if [[ -n $traces ]]; then
  python3 - "$traces" "$json_dir" <<'PY'
import gzip, json, os, sys
traces, out = sys.argv[1], sys.argv[2]
FIRST = 30       # the first events (metadata, the start of the first step)
PER_KIND = 3     # then up to this many events of each (cat, ph) pair
for root in ("kineto", "torch113-cpu"):
    for dirpath, _, files in sorted(os.walk(os.path.join(traces, root))):
        for fn in sorted(files):
            if not (fn.endswith(".json") or fn.endswith(".json.gz")):
                continue
            path = os.path.join(dirpath, fn)
            try:
                with (gzip.open(path, "rt") if fn.endswith(".gz") else open(path)) as f:
                    doc = json.load(f)
            except Exception:
                continue  # not JSON (bad_escape.json, N/A values): it has its own seeds
            events = doc if isinstance(doc, list) else doc.get("traceEvents") if isinstance(doc, dict) else None
            if not isinstance(events, list) or len(events) <= FIRST:
                continue  # small enough to be a seed as it is
            kept, seen = events[:FIRST], {}
            for e in events[FIRST:]:
                if not isinstance(e, dict):
                    continue
                key = (str(e.get("cat")), str(e.get("ph")))
                if seen.get(key, 0) < PER_KIND:
                    seen[key] = seen.get(key, 0) + 1
                    kept.append(e)
            if isinstance(doc, list):
                sliced = kept
            else:
                sliced = {k: v for k, v in doc.items() if k != "traceEvents"}
                sliced["traceEvents"] = kept
            rel = os.path.relpath(path, traces).replace("/", "_")
            name = "slice_" + (rel[:-3] if rel.endswith(".gz") else rel)
            with open(os.path.join(out, name), "w") as f:
                json.dump(sliced, f, indent=1 if len(name) % 2 else None)  # both layouts
PY
fi

# Hand-written edge cases: the formats and damage the readers must accept or reject cleanly.
cat > "$json_dir/edge_all_categories.json" <<'EOF'
{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "GPU \u00e9", "totalGlobalMem": 85, "computeMajor": 9,
 "computeMinor": 0, "numSms": 132}], "distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 2},
 "traceEvents": [
 {"ph": "M", "name": "process_name", "pid": 7, "tid": 0, "args": {"name": "python"}},
 {"ph": "M", "name": "thread_name", "pid": 7, "tid": 8, "args": {"name": "main"}},
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 7, "tid": 8, "ts": 100.5, "dur": 900},
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 8, "ts": 110, "dur": 50,
  "args": {"External id": 4, "Sequence number": 2, "Fwd thread id": 0, "Input Dims": [[2, 3], [3, 4]]}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 8, "ts": 120, "dur": 5,
  "args": {"correlation": 9, "External id": 4}},
 {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 7, "tid": 8, "ts": 126, "dur": 2, "args": {"correlation": 10}},
 {"ph": "X", "cat": "kernel", "name": "void at::native::gemm<float, 4>(int)", "pid": 0, "tid": "stream 7", "ts": 130, "dur": 40,
  "args": {"correlation": 9, "device": 0, "stream": 7, "context": 1, "grid": [4, 1, 1], "block": [128, 1, 1],
  "registers per thread": 32, "shared memory": 0, "Collective name": "allreduce", "dtype": "Float", "In msg nelems": 8,
  "Out msg nelems": 8, "Group size": 2, "Process Group Name": "0", "graph node id": 5}},
 {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 171, "dur": 3,
  "args": {"correlation": 11, "device": 0, "stream": 7, "bytes": 4096}},
 {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 175, "dur": 1, "args": {"bytes": 64}},
 {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7, "ts": 180, "dur": 1, "args": {"stream": 7}},
 {"ph": "X", "cat": "gpu_user_annotation", "name": "nccl:all_reduce", "pid": 0, "tid": 7, "ts": 130, "dur": 40, "args": {"External id": 4}},
 {"ph": "X", "cat": "python_function", "name": "train.py(10): step", "pid": 7, "tid": 8, "ts": 101, "dur": 800},
 {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 7, "tid": 8, "ts": 112, "s": "t",
  "args": {"Addr": 140, "Bytes": 512, "Total Allocated": 512, "Total Reserved": 2048, "Device Type": 1, "Device Id": 0}},
 {"ph": "s", "cat": "ac2g", "id": 9, "pid": 7, "tid": 8, "ts": 120, "name": "ac2g"},
 {"ph": "f", "cat": "ac2g", "id": 9, "pid": 0, "tid": 7, "ts": 130, "bp": "e", "name": "ac2g"},
 {"ph": "s", "cat": "fwdbwd", "id": 2, "pid": 7, "tid": 8, "ts": 110, "name": "fwdbwd"},
 {"ph": "f", "cat": "fwdbwd", "id": 2, "pid": 7, "tid": 8, "ts": 600, "bp": "e", "name": "fwdbwd"},
 {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: MmBackward0", "pid": 7, "tid": 8, "ts": 600, "dur": 80,
  "args": {"Sequence number": 2, "Fwd thread id": 8, "Ev Idx": 9}}
 ],
 "traceName": "edge", "baseTimeNanoseconds": 1700000000000000000}
EOF
cat > "$json_dir/edge_legacy_bare_array.json" <<'EOF'
[{"name": "aten::add", "ph": "X", "ts": 10, "dur": 3, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "ProfilerStep#1", "ph": "X", "ts": 5, "dur": 30, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "Optimizer.step#SGD.step", "ph": "X", "ts": 20, "dur": 9, "tid": 1, "pid": "CPU functions", "args": {}}]
EOF
# PyTorch 1.10 wrote bare N/A and a trailing comma; 2021 traces "Kernel"/"Runtime" and launch flows.
cat > "$json_dir/edge_2021_na_trailing_comma.json" <<'EOF'
{"schemaVersion": 1, "traceEvents": [
{"ph": "X", "cat": "Operator", "name": "aten::conv2d", "pid": 1, "tid": "1", "ts": 1623143089861, "dur": 12, "args": {"Input dims": [[1, 3]], "External id": N/A}},
{"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": "1", "ts": 1623143089862, "dur": 2, "args": {"correlation": 3, "external id": 1}},
{"ph": "X", "cat": "Kernel", "name": "implicit_convolve_sgemm", "pid": 0, "tid": "stream 7 ", "ts": 1623143089865, "dur": 9, "args": {"correlation": 3, "device": 0}},
{"ph": "X", "cat": "Memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 0, "tid": "stream 7", "ts": 1623143089875, "dur": 1},
{"ph": "s", "cat": "async", "name": "launch", "id": 3, "pid": 1, "tid": 1, "ts": 1623143089862},
{"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 1623143089800, "dur": 100},
],}
EOF
cat > "$json_dir/edge_numbers.json" <<'EOF'
{"traceEvents": [
{"ph": "X", "cat": "kernel", "name": "k", "pid": 18446744073709551615, "tid": -9223372036854775808, "ts": 9223372036854.775807, "dur": 1e3},
{"ph": "X", "cat": "kernel", "name": "k", "pid": 1, "tid": 1, "ts": -5.5e-3, "dur": -1},
{"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 1.2345678901234567890123e10, "dur": 604800000001},
{"ph": "X", "cat": "cuda_runtime", "name": "\u0063\ud83d\ude00\ud800x\"q\\", "pid": 1, "tid": 1, "ts": "12", "dur": null},
{"ph": "XX", "cat": "kernel"}, {"ph": "X"}, {"ph": "i", "name": "[memory]"}, {}
]}
EOF
cat > "$json_dir/edge_nested.json" <<'EOF'
{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 1, "dur": 1,
"args": {"Input Dims": [[[[[[[[[[1]]]]]]]]]], "x": {"y": [{"z": [true, false, null]}]}}}],
"other": {"a": [1, [2, [3, {"b": "c"}]]]}, "deviceProperties": "not an array", "distributedInfo": [1]}
EOF
# Truncations: inside a string, inside a number, between events, before the closing brace.
for f in "$json_dir"/edge_all_categories.json "$json_dir"/edge_2021_na_trailing_comma.json; do
  size=$(stat -c %s "$f")
  base=$(basename "$f" .json)
  for cut in 37 $((size / 3)) $((size / 2)) $((size - 3)); do
    head -c "$cut" "$f" > "$json_dir/${base}_cut$cut.json"
  done
done

# ---------------------------------------------------------------------------------------------
# Gzip: compressed slices and edge cases, multi-member streams, zero padding, truncation.
for f in "$json_dir"/edge_*.json "$json_dir"/slice_*.json; do
  [[ -e $f ]] || continue
  if (( $(stat -c %s "$f") <= max_gz )); then gzip -c -6 "$f" > "$gz_dir/$(basename "$f").gz"; fi
done
first=$json_dir/edge_all_categories.json
half=$(( $(stat -c %s "$first") / 2 ))
{ head -c "$half" "$first" | gzip -c -1; tail -c +"$((half + 1))" "$first" | gzip -c -9; } > "$gz_dir/edge_two_members.json.gz"
{ gzip -c "$first"; head -c 64 /dev/zero; } > "$gz_dir/edge_zero_padding.json.gz"
gz_size=$(stat -c %s "$gz_dir/edge_two_members.json.gz")
head -c $((gz_size - 5)) "$gz_dir/edge_two_members.json.gz" > "$gz_dir/edge_truncated_trailer.json.gz"
head -c $((gz_size / 2)) "$gz_dir/edge_two_members.json.gz" > "$gz_dir/edge_truncated_middle.json.gz"

# ---------------------------------------------------------------------------------------------
# nsys SQLite exports: the small real ones, trimmed copies of every one, the repository's own.
if [[ -n $traces ]]; then
  while IFS= read -r -d '' f; do
    if (( $(stat -c %s "$f") <= max_sqlite )); then cp "$f" "$sqlite_dir/$(seed_name "$f")"; fi
  done < <(find "$traces/nsys" -type f -name '*.sqlite' -print0 | sort -z)
fi
cp examples/*.sqlite "$sqlite_dir/" 2>/dev/null || true

# The synthetic exports of the golden tests, built from their SQL as the tests build them.
build_sql_export() {  # name sql-files...
  local name=$1; shift
  python3 - "$sqlite_dir/synthetic_$name.sqlite" "$@" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for script in sys.argv[2:]:
    with open(script) as f:
        db.executescript(f.read())
db.commit()
db.close()
PY
}
g=tests/golden
build_sql_export um_openmp $g/um_openmp/export_skeleton.sql $g/um_openmp/cuda_memcpy.sql \
  $g/um_openmp/um_cpu_page_faults.sql $g/um_openmp/um_gpu_page_faults.sql $g/um_openmp/openmp.sql $g/um_openmp/um_edge_rows.sql
build_sql_export nvtx_name $g/nvtx_name/launches.sql $g/nvtx_name/nvtx_ranges.sql
build_sql_export filters $g/filters/edge_cases.sql

# Trimmed copies: the first rows of every table, 512-byte pages (interior b-tree pages, overflow
# chains for long names), and a few long strings so that every export has overflow pages.
python3 - "$sqlite_dir" <<'PY'
import os, sqlite3, sys
out = sys.argv[1]
ROWS = 12
READ = {"StringIds", "META_DATA_EXPORT", "EXPORT_META_DATA", "TARGET_INFO_SESSION_START_TIME", "ThreadNames",
        "PROCESSES", "TARGET_INFO_GPU", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
        "CUDA_GPU_MEMORY_USAGE_EVENTS", "PROFILER_OVERHEAD", "OSRT_API", "NVTX_EVENTS",
        "CUDA_UM_CPU_PAGE_FAULT_EVENTS", "CUDA_UM_GPU_PAGE_FAULT_EVENTS", "ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEM_KIND"}
for fn in sorted(os.listdir(out)):
    if not fn.endswith(".sqlite") or fn.startswith("trim_"):
        continue
    src = sqlite3.connect("file:%s?mode=ro&immutable=1" % os.path.join(out, fn), uri=True)
    dst_path = os.path.join(out, "trim_" + fn)
    if os.path.exists(dst_path):
        os.remove(dst_path)
    dst = sqlite3.connect(dst_path)
    dst.execute("PRAGMA page_size=512")
    dst.execute("PRAGMA journal_mode=DELETE")
    tables = src.execute("SELECT name, sql FROM sqlite_master WHERE type='table' AND sql IS NOT NULL "
                         "AND name NOT LIKE 'sqlite_%'").fetchall()
    # Only the tables the reader reads (an export has ~150): each costs pages in every seed.
    tables = [(n, q) for n, q in tables if n in READ or n.startswith("OPENMP_EVENT_KIND_")]
    for name, sql in tables:
        dst.execute(sql)
        rows = src.execute('SELECT * FROM "%s" LIMIT %d' % (name.replace('"', '""'), ROWS)).fetchall()
        if rows:
            marks = ",".join("?" * len(rows[0]))
            dst.executemany('INSERT INTO "%s" VALUES (%s)' % (name.replace('"', '""'), marks), rows)
    if any(name == "StringIds" for name, _ in tables):
        dst.execute("INSERT OR IGNORE INTO StringIds (id, value) VALUES (999999, ?)", ("void long_kernel<" + "int, " * 300 + "int>(float*)",))
    dst.commit()
    dst.execute("VACUUM")
    dst.close()
    src.close()
PY
# Truncated exports: the schema survives, the table pages do not.
for f in "$sqlite_dir"/trim_*.sqlite; do
  size=$(stat -c %s "$f")
  head -c $((size / 2)) "$f" > "${f%.sqlite}_half.sqlite"
  break
done

# ---------------------------------------------------------------------------------------------
# tracedoc captures (.tdcap): frames built here following src/ingest/capture_format.h (every record
# type, several processes in one file, steps in one and kernels in another, extreme values, torn,
# damaged and unknown records), and real captures of the NVTX test program when the normal build has
# `tracedoc capture`. The fuzz body rewrites frame CRCs unless byte 7 is odd (fuzz_targets.h).
python3 - "$capture_dir" <<'PY'
import os, struct, sys, zlib
out = sys.argv[1]
MAGIC = b"TDCAP\x00\x01\x00"
MAX, MIN = 2**63 - 1, -2**63
def rec(kind, body): return struct.pack("<HH", kind, len(body)) + body
def frame(payload, crc=None):
    return struct.pack("<III", 0x52464454, len(payload), zlib.crc32(payload) if crc is None else crc) + payload
def process(pid, start, name=b"python"): return rec(1, struct.pack("<qqq", pid, 1, start) + name)
def thread(tid, name): return rec(2, struct.pack("<q", tid) + name)
def string(i, text): return rec(3, struct.pack("<I", i) + text)
def domain(i, name): return rec(4, struct.pack("<I", i) + name)
def push(tid, t, text, dom=0): return rec(10, struct.pack("<qqIIII", tid, t, dom, text, 0xFF00FF00, 0))
def pop(tid, t, dom=0): return rec(11, struct.pack("<qqI", tid, t, dom))
def start(rid, tid, t, text, dom=0): return rec(12, struct.pack("<QqqIIII", rid, tid, t, dom, text, 0, 0))
def end(rid, tid, t): return rec(13, struct.pack("<Qqq", rid, tid, t))
def mark(tid, t, text): return rec(14, struct.pack("<qqIIII", tid, t, 0, text, 0, 0))
def kernel(s, e, corr, name, dev=0, stream=7, graph=0):
    return rec(20, struct.pack("<qqqq" + "i" * 12 + "I", s, e, corr, graph, dev, 1, stream, 4, 1, 1, 128, 1, 1, 32, 0, 0, name))
def memcpy(s, e, corr, nbytes, kind=1): return rec(21, struct.pack("<qqqqiiiiiBBB", s, e, corr, nbytes, 0, 1, 7, -1, 0, kind, 0, 2))
def memset(s, e, corr, nbytes): return rec(22, struct.pack("<qqqqqiiiB", s, e, corr, nbytes, 0, 0, 1, 7, 2))
def api(tid, s, e, corr, name, cls=0): return rec(23, struct.pack("<qqqqqIB", tid, s, e, corr, 0, name, cls))
def sync(s, e, corr, event=-1, kind=3): return rec(24, struct.pack("<qqqqiiii", s, e, corr, event, 0, 1, 7, kind))
def memory(t, addr, nbytes, op): return rec(25, struct.pack("<qqqqiii", t, addr, nbytes, 0, 0, 2, op))
def overhead(tid, s, e): return rec(26, struct.pack("<qqqI", tid, s, e, 0))
def device(i, name, sms=132, mem=85 << 30): return rec(27, struct.pack("<iiiiqI", i, sms, 9, 0, mem, name))
def dropped(n): return rec(28, struct.pack("<Q", n))
def capture_range(s, e): return rec(29, struct.pack("<qq", s, e))
def cuda_event(corr, event, sync_id=-1, t=0): return rec(30, struct.pack("<qqqqiii", corr, event, sync_id, t, 0, 1, 7))
def graph_trace(s, e, corr, graph): return rec(31, struct.pack("<qqqqiii", s, e, corr, graph, 0, 1, 7))
def os_call(tid, s, e, name, ret=0): return rec(32, struct.pack("<qqqqI", tid, s, e, ret, name))
def os_thread(tid, name): return rec(33, struct.pack("<q", tid) + name)
def write(name, *frames, magic=MAGIC):
    with open(os.path.join(out, name), "wb") as f:
        f.write(magic + b"".join(frames))

T = 1_700_000_000_000_000_000  # CLOCK_REALTIME ns
strings = (string(1, b"ProfilerStep#1") + string(2, b"ProfilerStep#2") + string(3, b"cudaLaunchKernel_v7000") +
           string(4, b"void gemm<float>(float*, int)") + string(5, b"cudaMemcpyAsync_v3020") + string(6, b"poll") +
           string(7, b"H100 \xc3\xa9") + string(8, b"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)") +
           string(9, b"cudaEventRecord") + string(10, b"data load"))
everything = (process(100, T, b"python") + thread(101, b"trainer") + os_thread(102, b"pt_worker") + strings +
              domain(1, b"training") + device(0, 7) +
              push(101, T + 1000, 1) + push(101, T + 2000, 10, 1) + pop(101, T + 3000, 1) + pop(101, T + 900_000) +
              push(101, T + 1_000_000, 2) + pop(101, T + 1_900_000) + start(42, 101, T + 100, 10) + end(42, 102, T + 5000) +
              mark(101, T + 1500, 10) +
              api(101, T + 1100, T + 1200, 1, 3) + kernel(T + 1300, T + 50_000, 1, 4) +
              api(101, T + 1300, T + 1400, 2, 5) + memcpy(T + 60_000, T + 61_000, 2, 4096) +
              api(101, T + 1500, T + 1600, 3, 3) + memset(T + 62_000, T + 63_000, 3, 64) +
              api(101, T + 1700, T + 1800, 4, 9) + cuda_event(4, 1, 7, T + 70_000) + sync(T + 71_000, T + 72_000, 5, 1) +
              memory(T + 1200, 0x7F0000, 1 << 20, 0) + memory(T + 1_800_000, 0x7F0000, 1 << 20, 1) +
              overhead(102, T + 10, T + 20) + api(101, T + 2000, T + 2100, 6, 3) + graph_trace(T + 80_000, T + 90_000, 6, 3) +
              os_call(101, T + 95_000, T + 99_000, 6) + dropped(3) + capture_range(T, T + 2_000_000) +
              api(101, T + 1_100_000, T + 1_100_100, 7, 3, 1) + kernel(T + 1_200_000, T + 1_300_000, 7, 8, 1, 9, 5))
write("every_record.tdcap", frame(everything))
# The same records over two frames (split at a record boundary: the first kernel) and a torn third.
half = len(process(100, T, b"python") + thread(101, b"trainer") + os_thread(102, b"pt_worker") + strings)
write("two_frames_torn_tail.tdcap", frame(everything[:half]), frame(everything[half:]), frame(strings)[:25])
# Steps in process 100, the kernels and copies of process 200 (two processes in one file).
steps = process(100, T, b"trainer") + strings + push(101, T + 1000, 1) + pop(101, T + 2_000_000) + push(101, T + 2_000_000, 2) + pop(101, T + 4_000_000)
gpu = (process(200, T + 500, b"worker") + strings + api(201, T + 1500, T + 1600, 1, 3) + kernel(T + 1700, T + 900_000, 1, 4) +
       api(201, T + 2_100_000, T + 2_100_100, 2, 5) + memcpy(T + 2_200_000, T + 3_000_000, 2, 1 << 30, 2) +
       api(201, T + 3_100_000, T + 3_100_100, 3, 5) + memcpy(T + 3_200_000, T + 3_300_000, 3, 0, 8))
write("steps_and_gpu_in_two_processes.tdcap", frame(steps), frame(gpu))
# Extreme values: times near 2^63 and INT64_MIN, ends before starts, sizes near 2^63, zero and
# negative byte counts, unknown string ids, an unknown record type, a record larger than its frame.
extreme = (process(7, MIN, b"") + strings + push(7, MAX, 1) + pop(7, MIN) + push(7, 0, 99) +
           api(7, MAX - 10, MIN, 1, 3) + kernel(MAX - 1, MIN + 1, 1, 4) + kernel(-5, -10, 1, 12345) +
           memcpy(0, MAX, 2, MAX) + memcpy(MAX, 0, 3, -1) + memset(MIN, MAX, 4, MIN) + memory(MAX, -1, MAX, 7) +
           cuda_event(1, -1, MAX, MIN) + graph_trace(MIN, MAX, 1, -1) + os_call(7, MAX, MIN, 6, -1) +
           overhead(7, MAX, MIN) + device(-1, 99999, -1, MIN) + sync(MAX, MIN, 1, MAX, 77) +
           start(2**64 - 1, 7, MIN, 2) + end(2**64 - 1, -1, MAX) + end(5, 7, 0) + pop(8, 0) +
           rec(999, b"future record") + rec(20, b"short"))
write("extreme_values.tdcap", frame(extreme))
write("record_past_frame.tdcap", frame(process(1, T) + struct.pack("<HH", 3, 4000) + b"abc"))
# Long and invalid strings (a record body holds at most 65,535 bytes).
long_strings = (process(3, T, b"\xff" * 100) + string(1, b"w" * 30000) + string(2, bytes(range(128, 256)) * 100) +
                string(3, b"ProfilerStep#" + b"9" * 30000) + thread(3, b"\xc3") + domain(1, b"\xed\xa0\x80" * 1000) +
                push(3, T + 1, 3) + pop(3, T + 100_000) + api(3, T + 10, T + 20, 1, 2) + kernel(T + 30, T + 40, 1, 1) +
                mark(3, T + 50, 2))
write("long_invalid_strings.tdcap", frame(long_strings))
# Damage: a bad CRC kept (byte 7 odd: the body does not fix it), a bad frame magic, a frame length
# past kMaxFrame, a header only, an old and a future version, a short header.
odd = b"TDCAP\x00\x01\x01"
write("bad_crc_kept.tdcap", frame(everything), frame(strings, crc=0xDEADBEEF), magic=odd)
write("bad_frame_magic.tdcap", frame(everything), b"XXXX" + frame(strings)[4:])
write("frame_length_past_max.tdcap", struct.pack("<III", 0x52464454, (64 << 20) + 1, 0) + b"\x00" * 32)
write("header_only.tdcap")
write("future_version.tdcap", frame(everything), magic=b"TDCAP\x00\x02\x00")
write("short_header.tdcap", magic=b"TDCA")
write("empty_frames.tdcap", frame(b""), frame(b""), frame(process(9, 0)))
PY
# Real captures, when the normal build has the injection library and the NVTX test program.
if [[ -x $build/tracedoc && -x $build/tracedoc_nvtx_program && -e $build/libtracedoc_inject.so ]]; then
  tmp=$(mktemp -d)
  n=0
  for mode in "ranges 3" "fork" "steps 3 2 50" "waits"; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    if timeout 60 "$build/tracedoc" capture -o "$tmp/c$n" --trace nvtx,osrt-lite -- "$build/tracedoc_nvtx_program" $mode \
        > /dev/null 2>&1 || [[ -d $tmp/c$n ]]; then
      for f in "$tmp/c$n"/*.tdcap; do
        [[ -e $f ]] && cp "$f" "$capture_dir/real_${mode// /_}_$(basename "$f")"
      done
    fi
  done
  rm -rf "$tmp"
else
  echo "no $build/tracedoc with the injection library: capture seeds are the hand-built ones only" >&2
fi

# ---------------------------------------------------------------------------------------------
# fuzz_analyses: recipes, not files (fuzz/trace_recipe.h): byte 0 the route and the processes of
# the steps and the launches, byte 1 the time base, bytes 2-4 the event counts, then the values.
python3 - "$analyses_dir" <<'PY'
import os, random, sys
out = sys.argv[1]
rng = random.Random(1)
def write(name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(bytes(data))
write("empty", b"")
for flags in range(8):
    for base in range(8):
        # every count at its largest, ordinary values (small offsets and durations) ...
        # (64, 29, 239: 4 steps, 8 kernels, 5 copies, 3 memsets, 3 ranges, 3 ops, 2 syncs, 3 extras)
        write("f%d_b%d_ordinary" % (flags, base), [flags, base, 64, 29, 239] + [rng.randrange(0, 200) for _ in range(400)])
    # ... and hostile ones (the high bytes pick the tables' extremes)
    write("f%d_hostile" % flags, [flags, rng.randrange(8), 64, 29, 239] + [rng.randrange(200, 256) for _ in range(600)])
    write("f%d_random" % flags, [flags] + [rng.randrange(256) for _ in range(800)])
    write("f%d_steps_only" % flags, [flags, 0, 4, 0, 0])
    write("f%d_one_copy_one_step" % flags, [flags, 0, 1, 1, 0])
PY

# ---------------------------------------------------------------------------------------------
# fuzz_ncu_report: the real Nsight Compute reports under 1 MB and CSV exports, and one report in zstd
if [[ -n $traces ]]; then
  while IFS= read -r -d '' f; do
    if (( $(stat -c %s "$f") <= 1024 * 1024 )); then cp "$f" "$ncu_dir/$(seed_name "$f")"; fi
  done < <(find "$traces/ncu" -type f \( -name '*.ncu-rep' -o -name '*.ncu.*.csv' \) -print0 | sort -z)
  if command -v zstd > /dev/null && [[ -f $traces/ncu/extrap/ex-gpu.s10.ncu-rep ]]; then
    zstd -q -c "$traces/ncu/extrap/ex-gpu.s10.ncu-rep" > "$ncu_dir/ncu_extrap_ex-gpu.s10.ncu-repz"
  fi
fi

chmod -R u+w "$out"  # copies of the read-only shared files: libFuzzer and the next run rewrite them
for d in "$json_dir" "$gz_dir" "$sqlite_dir" "$capture_dir" "$analyses_dir" "$ncu_dir"; do
  echo "$(basename "$d"): $(find "$d" -type f | wc -l) seeds, $(du -sh "$d" | cut -f1)"
done
