#!/usr/bin/env bash
# Builds tracedoc with AddressSanitizer + UndefinedBehaviorSanitizer (TRACEDOC_SANITIZE=ON, benchmarks
# left out) into ./build-asan, or into $BUILD_DIR, and runs the whole test suite on it: the CLI tests run
# the sanitized `tracedoc` of that build. Any sanitizer report (memory error, leak, undefined behaviour)
# aborts the process that made it, so its test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-asan}
JOBS=${JOBS:-$(nproc)}

# abort_on_error: a finding ends the process with SIGABRT, never with an exit code a test could expect
# (the CLI tests check exit codes 1 and 2 of the tracedoc binary). detect_leaks: LeakSanitizer at exit.
# verify_asan_link_order=0: the osrt-lite capture tests preload the (instrumented) recorder ahead of the
# ASan runtime; its interposers then call ASan's interceptors, which call libc, as in any other order.
# Variables already set by the caller are kept.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:verify_asan_link_order=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:abort_on_error=1}

cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRACEDOC_SANITIZE=ON \
  -DTRACEDOC_BUILD_TESTS=ON -DTRACEDOC_BUILD_BENCH=OFF > /dev/null
cmake --build "$BUILD_DIR" -j "$JOBS"
status=0
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" || status=$?
python3 scripts/skip_summary.py "$BUILD_DIR" || true
exit "$status"
