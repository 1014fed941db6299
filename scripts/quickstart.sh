#!/usr/bin/env bash
# One command from a fresh Debian machine: install the build dependencies, build tracedoc, write the
# example Nsight Systems export with the project's own generator, and print its overview, its
# nsys-style reports, what the analyze rules find in it and the diagnosis, and write its interactive
# timeline as one HTML file.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh tracedoc make_nsys_example  # what it runs; scripts/test.sh builds the rest
BUILD_DIR=${BUILD_DIR:-build}
"$BUILD_DIR/make_nsys_example" "$BUILD_DIR/toy_training.sqlite" 4
"$BUILD_DIR/tracedoc" summary "$BUILD_DIR/toy_training.sqlite"
"$BUILD_DIR/tracedoc" stats -f column "$BUILD_DIR/toy_training.sqlite"
"$BUILD_DIR/tracedoc" analyze -f column "$BUILD_DIR/toy_training.sqlite"
"$BUILD_DIR/tracedoc" diagnose "$BUILD_DIR/toy_training.sqlite"
"$BUILD_DIR/tracedoc" view "$BUILD_DIR/toy_training.sqlite" -o "$BUILD_DIR/toy_training.html" --colors critical
echo "Timeline and report: $BUILD_DIR/toy_training.html (open it in a browser)"
