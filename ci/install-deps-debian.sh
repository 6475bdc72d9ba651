#!/usr/bin/env bash
# Installs what forkcheck needs on Debian bookworm (or a matching Ubuntu), skipping what is there.
# Runs as root, or through sudo when it is available.
#   --harness  only what exec, watch, matrix, diff and env need: no libtorch, no OpenMP
#              (ci/build-harness.sh)
#   --run      what building and running all of forkcheck needs (ci/run-all.sh)
#   (none)     that and everything the test suite needs (ci/run-tests.sh)
set -euo pipefail

harness_packages=(
  cmake ninja-build g++ pkg-config ccache
  libboost-dev libboost-filesystem-dev nlohmann-json3-dev libcli11-dev
  libpugixml-dev libutfcpp-dev   # reports: junit.xml, UTF-8 repair
  gdb elfutils                   # the stacks of a stuck tree (eu-stack, gdb)
  python3-dbg  # CPython's gdb extension and debug symbols: the Python frames of a stuck program
  help2man     # forkcheck(1), made from forkcheck --help
)
run_packages=(
  "${harness_packages[@]}"
  libtorch-dev libomp-dev  # the catalog's repro programs
)
test_packages=(
  libgtest-dev
  python3-torch  # forkcheck watch's Python multiprocessing test (skipped without it)
  libpng-dev                               # tests: the screenshot test
  python3-jsonschema chromium              # tests: report.json against its schema, report.html drawn
  python3-pytest                           # tests: a stalled pytest test is named
  python3-pip python3-setuptools python3-wheel  # tests: the wheel built from the tree
  g++-mingw-w64-x86-64-posix wine64        # tests: the Windows code path cross-compiled, run under wine
  dpkg-dev                                 # ... and pugixml's Debian source unpacked for it
  shellcheck                               # tests: the ci/ scripts
  clang-format                             # tests: the C and C++ sources in their own style
  clang-tidy                               # tests: the sources a commit changed, .clang-tidy's checks
  strace                                   # tests: every worker names forkcheck its ptracer
)
case ${1:-} in
  --harness) packages=("${harness_packages[@]}") ;;
  --run) packages=("${run_packages[@]}") ;;
  "") packages=("${run_packages[@]}") ;;
  *) echo "install-deps: unknown option $1 (--harness, --run or none)" >&2; exit 2 ;;
esac
if [ -z "${1:-}" ]; then
  packages+=("${test_packages[@]}")
  # npm for the workflow check (ci/install-node-tools.sh fetches its validator); Node.js from
  # elsewhere (NodeSource's nodejs carries its own npm) is kept as it is.
  command -v npm >/dev/null || packages+=(npm)
fi

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
