#!/usr/bin/env bash
# Records what the real `nsys analyze` (Nsight Systems 2023.4.4) prints on PyTorch profiler traces
# converted to Nsight Systems exports by `tracedoc export --to sqlite`, for each case of cases.txt,
# in expected/<case>/, file names as nsys names them (`:` in the rule becoming `_`):
#   analyze_<rule>.csv      the CSV nsys wrote (empty: no problem found)
#   analyze_<rule>.skipped  nsys's SKIPPED reason instead, when it refused the file
#   timebase.txt            the export's session start and time shift (TARGET_INFO_SESSION_START_TIME,
#                           META_DATA_EXPORT), which the test checks before it compares times
#   stats_<report>.csv      what `nsys stats` printed for each report of its default set it ran
#                           (those it skipped are left out), and for cuda_gpu_kern_gb_sum
# The export is written to a temporary directory and removed afterwards.
# Usage: NSYS=/path/to/nsys [TRACEDOC=/path/to/tracedoc] [SHARED=/path/to/shared] tests/golden/analyze_pytorch/regen.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
: "${NSYS:?set NSYS to the nsys 2023.4.4 executable}"
tracedoc=${TRACEDOC:-$repo/build/tracedoc}
traces=${SHARED:-$repo/../shared}/traces/kineto
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

grep -v '^#' "$here/cases.txt" | while read -r name source rules; do
  [ -n "$name" ] || continue
  case $source in
    repo:*) trace=$repo/${source#repo:} ;;
    *) trace=$traces/$source ;;
  esac
  if [ ! -e "$trace" ]; then echo "skip $name: $source not found"; continue; fi
  db=$work/$name.sqlite
  "$tracedoc" export "$trace" --to sqlite -o "$db"
  out=$here/expected/$name
  rm -rf "$out"; mkdir -p "$out"
  python3 - "$db" > "$out/timebase.txt" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
start = db.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()[0]
shift = db.execute("SELECT value FROM META_DATA_EXPORT WHERE name = 'TRACEDOC_SOURCE_TIME_SHIFT_NS'").fetchone()
print(f"session_start_utc_ns={start}")
print(f"shift_ns={shift[0] if shift else 0}")
PY
  for reports in "" "-r cuda_gpu_kern_gb_sum"; do
    log=$("$NSYS" stats --force-overwrite true $reports -f csv -o "$work/stats" "$db" 2>&1 < /dev/null || true)
    for report in $(grep -o 'reports/[a-z0-9_]*\.py\] to \[[^]]*\]\.\.\. PROCESSED' <<<"$log" | sed 's|reports/\([a-z0-9_]*\)\.py.*|\1|'); do
      cp "$work/stats_$report.csv" "$out/stats_$report.csv"
    done
    rm -f "$work"/stats_*.csv
  done
  for rule in ${rules//,/ }; do
    base=$work/out
    log=$("$NSYS" analyze --force-overwrite true -r "$rule" -f csv -o "$base" "$db" 2>&1 < /dev/null || true)
    stem=analyze_${rule//:/_}
    produced=$(ls "$base"_*.csv 2>/dev/null | head -1 || true)
    if grep -q "SKIPPED" <<<"$log"; then
      grep -o "SKIPPED: .*" <<<"$log" | sed "s|$db|INPUT|" > "$out/$stem.skipped"
    elif [ -n "$produced" ]; then
      cp "$produced" "$out/$stem.csv"
    else
      : > "$out/$stem.csv"
    fi
    rm -f "$base"_*.csv
  done
  rm -f "$db"
  echo "$name: $(ls "$out" | wc -l) files"
done
