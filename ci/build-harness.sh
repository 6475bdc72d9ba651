#!/usr/bin/env bash
# Quick start for diagnosing your own program only: install what `exec`, `watch`, `matrix`,
# `diff` and `env` need (no libtorch, no OpenMP), build just those into build-harness/ (or
# $FORKCHECK_BUILD_DIR) and say where forkcheck is. The catalog (`forkcheck all`) needs the repro
# programs: ci/run-all.sh builds them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps-debian.sh --harness
build=${FORKCHECK_BUILD_DIR:-build-harness}
FORKCHECK_BUILD_DIR=$build bash ci/build.sh -DFORKCHECK_PARTS=harness -DFORKCHECK_BUILD_TESTS=OFF
echo "forkcheck $("$build/bin/forkcheck" --version | head -n 1 | sed 's/^forkcheck //'): $build/bin/forkcheck"
echo "  $build/bin/forkcheck exec --timeout 60 -- python3 train.py   (docs/commands.md)"
