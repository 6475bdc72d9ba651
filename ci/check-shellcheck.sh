#!/usr/bin/env bash
# Runs shellcheck on every shell script of ci/ and cmake/ and on .ci/run. Exit status 77 when it
# is not installed (ci/install-deps-debian.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v shellcheck >/dev/null; then
  echo "SKIP: shellcheck is not installed"
  exit 77
fi
scripts=(ci/*.sh cmake/*.sh tests/install/*.sh tests/ci/*.sh .ci/run)
shellcheck --shell=bash "${scripts[@]}"
echo "shellcheck: ${#scripts[@]} scripts clean: ${scripts[*]}"
