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

# Limits: a JSON seed at most 1 MB uncompressed, a gzip seed at most 256 KB, an nsys export 5 MB.
max_json=$((1024 * 1024))
max_gz=$((256 * 1024))
max_sqlite=$((5 * 1024 * 1024))

rm -rf "$json_dir" "$gz_dir" "$sqlite_dir"
mkdir -p "$json_dir" "$gz_dir" "$sqlite_dir"

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

chmod -R u+w "$out"  # copies of the read-only shared files: libFuzzer and the next run rewrite them
for d in "$json_dir" "$gz_dir" "$sqlite_dir"; do
  echo "$(basename "$d"): $(find "$d" -type f | wc -l) seeds, $(du -sh "$d" | cut -f1)"
done
