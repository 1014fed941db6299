#!/usr/bin/env bash
# Records what the real `nsys stats` (Nsight Systems 2023.4.4) prints for each case of cases.txt in
# expected/<case>/ (file names as nsys names its outputs, `:` in the report becoming `_`):
#   stats_<report>.csv          the CSV nsys wrote
#   stats_<report>.sampled.csv  (`every=N` cases) a sample of it: "nsys line" (0 = header) + the row
#   stats_<report>.skipped      nsys's SKIPPED reason instead, when it refused the file
# nsys runs on a copy of each input (it may write next to it).
# Usage: NSYS=/path/to/nsys [SHARED=/path/to/shared] tests/golden/nvtx_name/regen.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
: "${NSYS:?set NSYS to the nsys 2023.4.4 executable}"
traces=${SHARED:-$repo/../shared}/traces/nsys
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

sample() {  # sample EVERY IN OUT
  python3 - "$@" <<'PY'
import csv, sys
every, src, dst = int(sys.argv[1]), sys.argv[2], sys.argv[3]
rows = list(csv.reader(open(src, newline='')))
keep = [i for i in range(len(rows)) if i <= 10 or i % every == 0 or i == len(rows) - 1]
with open(dst, 'w', newline='') as f:
    w = csv.writer(f, lineterminator='\n')
    for i in keep:
        w.writerow(['nsys line' if i == 0 else i] + rows[i])
PY
}

# make_input SOURCE DB: writes the export nsys reads for a cases.txt source; fails if it is absent.
make_input() {
  local source=$1 db=$2 f
  case $source in
    sql:*)
      for f in ${1//+/ }; do cat "$here/${f#sql:}"; done | sqlite3 "$db" ;;
    example:*) cp "$repo/examples/${source#example:}" "$db" ;;
    shared:*) [ -f "$traces/${source#shared:}" ] && cp "$traces/${source#shared:}" "$db" ;;
    reexport:*)
      [ -f "$traces/${source#reexport:}.nsys-rep" ] || return 1
      cp "$traces/${source#reexport:}.nsys-rep" "$db.nsys-rep"
      "$NSYS" export --type sqlite -o "$db" "$db.nsys-rep" < /dev/null > /dev/null 2>&1 ;;
  esac
}

grep -v '^#' "$here/cases.txt" | while read -r name source kept reports; do
  [ -n "$name" ] || continue
  db=$work/$name.sqlite
  if ! make_input "$source" "$db"; then echo "skip $name: $source not found"; continue; fi
  out=$here/expected/$name
  rm -rf "$out"; mkdir -p "$out"
  for report in ${reports//,/ }; do
    stem=stats_${report//:/_}
    log=$("$NSYS" stats --force-overwrite true -r "$report" -f csv -o "$work/$name" "$db" < /dev/null 2>&1)
    if grep -q 'SKIPPED: ' <<<"$log"; then
      awk -v p="SKIPPED: $db " 'i = index($0, p) { print substr($0, i + length(p)) }' <<<"$log" > "$out/$stem.skipped"
    elif [ "$kept" = all ]; then
      cp "$work/${name}_${report//:/_}.csv" "$out/$stem.csv"
    else
      sample "${kept#every=}" "$work/${name}_${report//:/_}.csv" "$out/$stem.sampled.csv"
    fi
  done
done
