#!/usr/bin/env bash
# Configures and builds forkcheck into build/ (or $FORKCHECK_BUILD_DIR). Extra arguments go to
# CMake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${FORKCHECK_BUILD_DIR:-build}
jobs=$(nproc 2>/dev/null || echo 2)
generator=()
command -v ninja >/dev/null && [ ! -f "$build/Makefile" ] && generator=(-G Ninja)
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build "$build" -j "$jobs"
