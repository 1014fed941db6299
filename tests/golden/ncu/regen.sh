#!/usr/bin/env bash
# Writes the expected `tracedoc ncu REPORT -f csv` launch tables of tests/ncu_report_test.cpp's
# golden test (BASE_ncu_kernels.csv) from the reports of ../shared/traces/ncu (ncu's rule messages
# are its own text: the test checks them in place, not kept here). Run after a
# change of the tables, and read the diff: the figures the test checks against ncu's own rule
# messages must not move.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
shared=${TRACEDOC_SHARED:-$repo/../shared}
for report in armleth/report_v4_8_per_thread cs599k/rms_norm_vector_v1 extrap/ex-gpu.s10 lakshya/naive; do
  "$repo/build/tracedoc" ncu "$shared/traces/ncu/$report.ncu-rep" -f csv -o "$here/${report//\//_}" > /dev/null
  rm "$here/${report//\//_}_ncu_rules.csv"
done
