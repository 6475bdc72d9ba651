#!/usr/bin/env bash
# Quick start, first command: install what running forkcheck needs, build it (without the
# tests), run `forkcheck all`. Reports land in forkcheck-report/all-DATE-TIME/, with
# forkcheck-report/latest pointing there. Arguments go to `forkcheck all`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps-debian.sh --run
bash ci/build.sh -DFORKCHECK_BUILD_TESTS=OFF
exec "${FORKCHECK_BUILD_DIR:-build}/bin/forkcheck" all "$@"
