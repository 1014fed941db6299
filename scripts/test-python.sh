#!/usr/bin/env bash
# Builds and installs the Python package the way a user does (`pip install .`, scikit-build-core and
# nanobind from PyPI) into a virtual environment, ./.venv or $VENV, with its test dependencies, and
# runs its tests (tests/python). They compare the package's outputs with the CLI of ./build (or
# $BUILD_DIR), which scripts/test.sh builds first; tests on the real traces skip without ../shared.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/phases.sh
# The package's build (build-python/) compiles the engine as the command line's build did: through
# ccache, whose entries that build left serve it (CMake takes the launcher from the environment).
if [ -n "$(compiler_launcher)" ]; then export CMAKE_CXX_COMPILER_LAUNCHER=ccache; fi
VENV=$(realpath -m "${VENV:-.venv}")
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check ".[test]"
# From outside the checkout's python/ folder, so that the installed package is the one imported.
cd tests/python
"$VENV/bin/python" -m pytest -q -p no:cacheprovider .
