#!/usr/bin/env bash
# Builds and runs the whole test suite (the `slow` fault tests included), then the Python package's
# (scripts/test-python.sh). Tests that need the real traces in ../shared skip with a message when
# that folder is absent; the lines after ctest's say how many tests skipped and why.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}
status=0
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" || status=$?
python3 scripts/skip_summary.py "$BUILD_DIR" || true
# The Python package: pip install . into ./.venv and its pytest suite (scripts/test-python.sh).
BUILD_DIR="$BUILD_DIR" bash scripts/test-python.sh || status=$?
exit "$status"
