#!/usr/bin/env bash
# Builds and runs the whole test suite (the `slow` fault tests included), then the Python package's
# (scripts/test-python.sh). Each GoogleTest suite runs as one ctest test; the closing lines
# (scripts/test_summary.py) say how many tests ran, passed, failed and skipped, and why they skipped.
# Tests that need the real traces of ../shared skip, saying so, when that folder is absent.
#
#   scripts/test.sh           everything
#   scripts/test.sh --quick   the CLI and the test binary, and the self-contained suites (ctest label
#                             unit) alone: the check to run after each change
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/phases.sh
BUILD_DIR=${BUILD_DIR:-build}
quick=false
[ "${1:-}" = "--quick" ] && quick=true
status=0
if $quick; then
  phase build bash scripts/build.sh tracedoc tracedoc_tests
  phase tests ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" -L unit || status=$?
  python3 scripts/test_summary.py "$BUILD_DIR" || true
  exit "$status"
fi
phase build bash scripts/build.sh
phase tests ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" || status=$?
python3 scripts/test_summary.py "$BUILD_DIR" || true
# The Python package: pip install . into ./.venv and its pytest suite (scripts/test-python.sh).
BUILD_DIR="$BUILD_DIR" phase python bash scripts/test-python.sh || status=$?
exit "$status"
