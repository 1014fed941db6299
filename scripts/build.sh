#!/usr/bin/env bash
# Configures and builds tracedoc (Release) into ./build, or into $BUILD_DIR: every target (the CLI,
# the tests, the benchmarks, the layer checks), or only the targets named
# (`scripts/build.sh tracedoc make_nsys_example`, as the quick start builds).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/phases.sh
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release $(compiler_launcher) > /dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$BUILD_DIR" -j "$(nproc)" "${targets[@]}"
