#!/usr/bin/env bash
# Configures and builds forkcheck into build/ (or $FORKCHECK_BUILD_DIR), on Linux, macOS and
# Windows (Git Bash) alike. Extra arguments go to CMake's configure step. Where the dependencies
# are comes from the environment:
#   FORKCHECK_CMAKE_CACHE   an initial cache (cmake -C) that ci/install-deps-macos.sh or
#                           ci/install-deps-windows.ps1 wrote: libtorch's prefix, OpenMP, vcpkg
#   CMAKE_PREFIX_PATH, CMAKE_TOOLCHAIN_FILE   read by CMake itself (3.21 and later) when set
#   FORKCHECK_JOBS          how many compile jobs (default: the number of CPUs)
# (macOS runs this with bash 3.2: no empty "${array[@]}" under set -u.)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${FORKCHECK_BUILD_DIR:-build}
jobs=${FORKCHECK_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || nproc 2>/dev/null || echo 2)}
args=()
if [ -n "${FORKCHECK_CMAKE_CACHE:-}" ]; then args+=(-C "$FORKCHECK_CMAKE_CACHE"); fi
if command -v ninja >/dev/null && [ ! -f "$build/Makefile" ]; then args+=(-G Ninja); fi
cmake ${args[@]+"${args[@]}"} -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build "$build" -j "$jobs"
