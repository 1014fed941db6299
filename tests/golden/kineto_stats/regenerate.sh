#!/usr/bin/env bash
# Rewrites the goldens of the nsys-compatible reports on PyTorch (Kineto) traces,
# <name>.<report>.csv, with the built tracedoc:
#   tests/golden/kineto_stats/regenerate.sh [path/to/tracedoc]     (default: build/tracedoc)
# The traces come from ../shared/traces next to the checkout, or $TRACEDOC_SHARED/traces.
#
# A report that prints nothing (SKIPPED: the trace lacks the data) leaves an empty golden.
# A golden that would exceed $limit bytes (cuda_gpu_trace lists every GPU operation: megabytes on
# the larger traces) keeps only its header and first $keep rows; truncated.list records
# "<name> <report> <full row count>" for each, so that the test compares those rows and the
# full row count, and verify.py knows the table is a prefix.
#
# Check the diff by hand before committing, then run verify.py: it recomputes the cells from the
# raw JSON and must still pass.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
bin="${1:-$root/build/tracedoc}"
shared="${TRACEDOC_SHARED:-$root/../shared}"
limit=300000
keep=200

# name and path under traces/; the same list as kCases in tests/kineto_stats_golden_test.cpp and
# CASES in verify.py. One trace per format era / vendor (see the test for why each is there).
cases=(
  "resnet50_e1 kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
  "hta_diff_e2 kineto/HolisticTraceAnalysis/tests/data/trace_diff/test/test.json.gz"
  "alexnet_e3 kineto/HolisticTraceAnalysis/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
  "nccl_e5 kineto/HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz"
  "bert_mi300 kineto/TraceLens/tests/traces/mi300/gaunernst_bert-small-uncased__1016001.json.gz"
  "vllm_graph kineto/TraceLens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz"
)
reports=(cuda_gpu_kern_sum cuda_gpu_kern_gb_sum cuda_gpu_mem_time_sum cuda_gpu_mem_size_sum cuda_api_sum
         cuda_gpu_trace cuda_kern_exec_sum nvtx_sum nvtx_gpu_proj_sum nvtx_kern_sum)

list="$here/truncated.list.tmp"
: >"$list"
for c in "${cases[@]}"; do
  read -r name path <<<"$c"
  for r in "${reports[@]}"; do
    out="$here/$name.$r.csv"
    "$bin" stats -r "$r" -f csv "$shared/traces/$path" >"$out.tmp"
    # Report names never contain newlines (Kineto strips them), so a CSV row is one line.
    if [ "$(wc -c <"$out.tmp")" -gt "$limit" ]; then
      echo "$name $r $(($(wc -l <"$out.tmp") - 1))" >>"$list"
      head -n $((keep + 1)) "$out.tmp" >"$out"
      rm "$out.tmp"
    else
      mv "$out.tmp" "$out"
    fi
    echo "wrote $(basename "$out") ($(wc -l <"$out") lines)"
  done
done
mv "$list" "$here/truncated.list"
echo "truncated:"
cat "$here/truncated.list"
