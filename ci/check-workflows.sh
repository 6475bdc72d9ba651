#!/usr/bin/env bash
# Validates every GitHub Actions workflow in .github/workflows/, and the composite action
# action.yml at the top, against their schemas with
# action-validator (@action-validator/cli from the npm registry, pinned; ci/install-node-tools.sh
# puts it in .cache/npm/). Exit status 77 when npm is missing and the validator is not there.
set -euo pipefail
cd "$(dirname "$0")/.."

validator=.cache/npm/node_modules/.bin/action-validator
if [ ! -x "$validator" ]; then
  if ! command -v npm >/dev/null; then
    echo "SKIP: npm is not installed (ci/install-deps-debian.sh installs it)"
    exit 77
  fi
  bash ci/install-node-tools.sh
fi

status=0
count=0
for workflow in .github/workflows/*.yml .github/workflows/*.yaml action.yml; do
  [ -e "$workflow" ] || continue
  count=$((count + 1))
  if "$validator" "$workflow"; then
    echo "valid: $workflow"
  else
    echo "INVALID: $workflow"
    status=1
  fi
done
if [ ! -f action.yml ]; then
  echo "no action.yml: the composite action is missing"
  status=1
fi
if [ "$count" -eq 0 ]; then
  echo "no workflow found in .github/workflows/"
  exit 1
fi
exit $status
