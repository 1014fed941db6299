#!/usr/bin/env bash
# Installs the Debian packages tracedoc builds and tests with. Safe to run repeatedly.
set -euo pipefail
PACKAGES=(
  build-essential cmake ninja-build pkg-config clang-format
  libsqlite3-dev sqlite3 zlib1g-dev libisal-dev libzstd-dev
  libcli11-dev libfmt-dev libtomlplusplus-dev libpugixml-dev libre2-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-jsonschema python3-venv python3-dev
  chromium firefox-esr python3-websocket python3-pil fonts-dejavu-core
  ccache
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
