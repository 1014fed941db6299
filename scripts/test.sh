#!/usr/bin/env bash
# Builds and runs the whole test suite. Tests that need the real traces in ../shared skip with a
# message when that folder is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)"
