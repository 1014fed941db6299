#!/usr/bin/env bash
# Rewrites the PyTorch report goldens (<name>.<report>.csv) with the built tracedoc:
#   tests/golden/pytorch/regenerate.sh [path/to/tracedoc]     (default: build/tracedoc)
# The traces come from ../shared/traces next to the checkout, or $TRACEDOC_SHARED/traces.
# A report that prints nothing (SKIPPED: the trace lacks the data) leaves an empty golden.
# Check the diff by hand before committing: pytorch_report_test.cpp lists the cells that were
# verified independently of tracedoc; re-verify them if they change.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
bin="${1:-$root/build/tracedoc}"
shared="${TRACEDOC_SHARED:-$root/../shared}"

# name and path under traces/; the same list as kGoldenCases in tests/pytorch_report_test.cpp.
cases=(
  "resnet50_e1 kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
  "bert_small_h100 kineto/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"
  "cnn_fastdata torch113-cpu/cnn_fastdata.json"
)
reports=(op_sum op_sum:shapes step_sum)

for c in "${cases[@]}"; do
  read -r name path <<<"$c"
  for r in "${reports[@]}"; do
    out="$here/$name.${r//:/_}.csv"
    "$bin" stats -r "$r" -f csv "$shared/traces/$path" >"$out.tmp"
    mv "$out.tmp" "$out"
    echo "wrote $(basename "$out") ($(wc -l <"$out") lines)"
  done
done
