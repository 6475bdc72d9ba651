#!/usr/bin/env bash
# The npm tools the checks use, pinned, into the project-local .cache/npm/ (git-ignored), never
# globally: @action-validator/cli (ci/check-workflows.sh). Needs npm (Debian: the npm package).
set -euo pipefail
cd "$(dirname "$0")/.."
npm install --prefix .cache/npm --no-audit --no-fund --loglevel=error @action-validator/cli@0.6.0
