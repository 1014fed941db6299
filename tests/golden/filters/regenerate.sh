#!/usr/bin/env bash
# Regenerates the filter goldens listed in manifest.tsv with the real nsys (2023.4.4).
#   NSYS=/path/to/nsys tests/golden/filters/regenerate.sh [CASE...]
# Needs sqlite3 (for sql: inputs) and ../shared next to the checkout (or $TRACEDOC_SHARED) for shared: inputs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
shared=${TRACEDOC_SHARED:-$repo/../shared}
: "${NSYS:?set NSYS to the nsys executable}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

while IFS=$'\t' read -r name input reports kind value window _pending; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  if (($# > 0)) && [[ " $* " != *" $name "* ]]; then continue; fi
  db=$work/$name.sqlite  # a copy: nsys may write next to its input
  case "$input" in
    shared:*) cp "$shared/traces/nsys/${input#shared:}" "$db" ;;
    source:*) cp "$repo/${input#source:}" "$db" ;;
    sql:*) sql=${input#sql:}; for f in ${sql//+/ }; do cat "$repo/$f"; done | sqlite3 "$db" ;;
    *) echo "unknown input $input" >&2; exit 1 ;;
  esac
  case "$kind" in
    time) filter=(--filter-time "$value") ;;
    nvtx) filter=(--filter-nvtx "$value") ;;
    nvtx+all-ranks) filter=(--filter-time "$window") ;;
    *) echo "unknown filter $kind" >&2; exit 1 ;;
  esac
  rm -rf "${here:?}/$name"; mkdir -p "$here/$name"
  for report in ${reports//,/ }; do
    out=$here/$name/${report//:/_}.csv
    if ! "$NSYS" stats -q -r "$report" -f csv "${filter[@]}" -o - "$db" 2> "$work/err" | sed '/^$/d' > "$out"; then
      echo "$name $report: nsys failed" >&2; cat "$work/err" >&2; exit 1
    fi
    if [[ -s "$work/err" ]]; then echo "$name $report: $(cat "$work/err")" >&2; exit 1; fi
  done
  echo "$name: ok"
done < "$here/manifest.tsv"
