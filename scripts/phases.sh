# Sourced by the build and test scripts: `phase NAME COMMAND...` runs a step, prints how long it took,
# and appends "NAME SECONDS EXIT_CODE" to $TRACEDOC_PHASES when set (.ci/run prints them as a table).
# Returns the step's exit code.
phase() {
  local name=$1 started=$SECONDS rc=0
  shift
  "$@" || rc=$?
  local took=$((SECONDS - started))
  echo "phase ${name}: ${took} s (exit ${rc})"
  if [ -n "${TRACEDOC_PHASES:-}" ]; then echo "${name} ${took} ${rc}" >> "$TRACEDOC_PHASES"; fi
  return "$rc"
}

# Builds go through ccache when it is installed: its cache (~/.cache/ccache, or $CCACHE_DIR)
# survives between runs on a machine, so a second build recompiles only what changed; and within a
# run, the Python package's build (scripts/test-python.sh) finds the engine the command line's build
# compiled. Paths under the checkout are hashed relative to the build folder, so that two build
# folders at the same depth (build/, build-python/) share their entries.
# The compiler is named the same way in every build (CMake's default is `c++`, the package's build
# `g++`), since ccache keys its entries on that name too.
export CCACHE_BASEDIR=$PWD
export CXX=${CXX:-g++}
compiler_launcher() {
  if command -v ccache > /dev/null 2>&1; then echo "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"; fi
}
