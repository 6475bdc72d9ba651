#!/usr/bin/env bash
# Installs what forkcheck needs on Debian bookworm (or a matching Ubuntu), skipping what is there.
# Runs as root, or through sudo when it is available.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config ccache gdb elfutils
  python3-dbg  # CPython's gdb extension and debug symbols: the Python frames of a stuck program
  libtorch-dev libomp-dev
  libboost-dev libboost-filesystem-dev
  libgtest-dev nlohmann-json3-dev libcli11-dev
  python3-torch  # forkcheck watch's Python multiprocessing test (skipped without it)
  libpugixml-dev libutfcpp-dev libpng-dev  # reports: junit.xml, UTF-8 repair, the screenshot test
  python3-jsonschema chromium              # tests: report.json against its schema, report.html drawn
  g++-mingw-w64-x86-64-posix wine64        # tests: the Windows code path cross-compiled, run under wine
  dpkg-dev                                 # ... and pugixml's Debian source unpacked for it
  shellcheck                               # tests: the ci/ scripts
  strace                                   # tests: every worker names forkcheck its ptracer
)
# npm for the workflow check (ci/install-node-tools.sh fetches its validator); Node.js from
# elsewhere (NodeSource's nodejs carries its own npm) is kept as it is.
command -v npm >/dev/null || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: everything is installed"
  exit 0
fi

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
