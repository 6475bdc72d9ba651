#!/usr/bin/env bash
# Installs what forkcheck needs on Debian bookworm (or a matching Ubuntu), skipping what is there.
# Runs as root, or through sudo when it is available.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config ccache gdb
  libtorch-dev libomp-dev
  libboost-dev libboost-filesystem-dev
  libgtest-dev nlohmann-json3-dev libcli11-dev
)

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
