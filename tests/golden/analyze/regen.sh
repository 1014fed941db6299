#!/usr/bin/env bash
# Records what the real `nsys analyze` (Nsight Systems 2023.4.4) prints for each case of cases.txt
# in expected/<case>/, file names as nsys names them (`:` in the rule becoming `_`):
#   analyze_<rule>.csv      the CSV nsys wrote (empty: no problem found)
#   analyze_<rule>.skipped  nsys's SKIPPED reason instead, when it refused the file
# nsys runs on a copy of each input (it may write next to it).
# Usage: NSYS=/path/to/nsys [SHARED=/path/to/shared] tests/golden/analyze/regen.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
: "${NSYS:?set NSYS to the nsys 2023.4.4 executable}"
traces=${SHARED:-$repo/../shared}/traces/nsys
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

grep -v '^#' "$here/cases.txt" | while read -r name source rules; do
  [ -n "$name" ] || continue
  db=$work/$name.sqlite
  case $source in
    example:*) cp "$repo/examples/${source#example:}" "$db" ;;
    shared:*)
      if [ ! -f "$traces/${source#shared:}" ]; then echo "skip $name: $source not found"; continue; fi
      cp "$traces/${source#shared:}" "$db" ;;
  esac
  out=$here/expected/$name
  rm -rf "$out"; mkdir -p "$out"
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
