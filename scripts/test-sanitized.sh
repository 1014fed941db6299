#!/usr/bin/env bash
# The sanitizer passes of CI, each a build of its own with only the test suites written for it:
#
#   scripts/test-sanitized.sh address   AddressSanitizer + UndefinedBehaviorSanitizer (./build-asan) on
#                                       the suites labelled `sanitize`: every reader over every real
#                                       input, hostile and faulty inputs, the fuzzers' findings, the
#                                       recorder, the codecs, every report and rule once
#   scripts/test-sanitized.sh thread    ThreadSanitizer (./build-tsan) on the suites labelled `threads`:
#                                       the task pool, the parallel readers, reads on several threads
#                                       at once, the memory watchdog
#
# The CLI tests run that build's instrumented `tracedoc`. Any finding (a memory error, a leak,
# undefined behaviour, a data race) aborts the process that made it, so its test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/phases.sh
KIND=${1:-address}
case "$KIND" in
  address) LABEL=sanitize; BUILD_DIR=${BUILD_DIR:-build-asan} ;;
  thread) LABEL=threads; BUILD_DIR=${BUILD_DIR:-build-tsan} ;;
  *) echo "usage: scripts/test-sanitized.sh [address|thread]" >&2; exit 2 ;;
esac
JOBS=${JOBS:-$(nproc)}

# abort_on_error: a finding ends the process with SIGABRT, never with an exit code a test could expect
# (the CLI tests check exit codes 1 and 2 of the tracedoc binary). detect_leaks: LeakSanitizer at exit.
# verify_asan_link_order=0: the osrt-lite capture tests preload the (instrumented) recorder ahead of the
# ASan runtime; its interposers then call ASan's interceptors, which call libc, as in any other order.
# Variables already set by the caller are kept.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:verify_asan_link_order=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:abort_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:second_deadlock_stack=1}

# -O1 and line tables only (-g1): reports name the lines, and the build takes half the time of -O2
# with full debug info (the suites of these passes are small).
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
  -DTRACEDOC_SANITIZE="$KIND" -DTRACEDOC_TEST_LABEL="$LABEL" -DTRACEDOC_BUILD_BENCH=OFF -DTRACEDOC_LAYER_CHECKS=OFF \
  $(compiler_launcher) > /dev/null
phase "${KIND}-build" cmake --build "$BUILD_DIR" -j "$JOBS"
status=0
phase "${KIND}-tests" ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" || status=$?
python3 scripts/test_summary.py "$BUILD_DIR" || true
exit "$status"
