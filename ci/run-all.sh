#!/usr/bin/env bash
# Quick start, first command: install what is missing, build, run `forkcheck all`.
# Reports land in forkcheck-report/ (report.json, run.jsonl). Arguments go to `forkcheck all`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps-debian.sh
bash ci/build.sh
exec "${FORKCHECK_BUILD_DIR:-build}/bin/forkcheck" all "$@"
