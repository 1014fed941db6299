#!/usr/bin/env bash
# Rebuilds the synthetic exports of cases.txt with the sqlite3 shell and records what the real
# `nsys stats` (Nsight Systems 2023.4.4) prints for each report in expected/<case>/:
#   stats_<report>.csv      the CSV nsys wrote (`:` in the report name becomes `_`, as nsys names it)
#   stats_<report>.skipped  nsys's SKIPPED reason instead, when it refused the file
# Usage: NSYS=/path/to/nsys tests/golden/um_openmp/regen.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${NSYS:?set NSYS to the nsys 2023.4.4 executable}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
grep -v '^#' "$here/cases.txt" | while read -r name sql_files reports; do
  [ -n "$name" ] || continue
  db=$work/$name.sqlite
  for f in ${sql_files//+/ }; do cat "$here/$f"; done | sqlite3 "$db"
  out=$here/expected/$name
  rm -rf "$out"; mkdir -p "$out"
  for report in ${reports//,/ }; do
    stem=stats_${report//:/_}
    log=$("$NSYS" stats --force-overwrite true -r "$report" -f csv -o "$work/$name" "$db" 2>&1)
    if grep -q 'SKIPPED: ' <<<"$log"; then
      # "SKIPPED: <file> <reason>": keep the reason, the file path is the caller's.
      awk -v p="SKIPPED: $db " 'i = index($0, p) { print substr($0, i + length(p)) }' <<<"$log" > "$out/$stem.skipped"
    else
      cp "$work/${name}_${report//:/_}.csv" "$out/$stem.csv"
    fi
  done
done
