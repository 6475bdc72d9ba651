#!/usr/bin/env bash
# The rooms of harness/ are ordered (docs/internals.md) and each includes only rooms before it:
#   base platform stacks supervise python_facts torch catalog console session watch commands
# Fails naming every include that points to a room after its own (tests beside a unit, *_test.cc,
# may include what they need), and any room that is not in the order.
set -euo pipefail
cd "$(dirname "$0")/.."
order=(base platform stacks supervise python_facts torch catalog console session watch commands)
declare -A rank
for i in "${!order[@]}"; do rank[${order[$i]}]=$i; done
bad=0
for dir in harness/*/; do
  room=$(basename "$dir")
  [ "$room" = python ] && continue  # the Python bootstrap: no C++
  if [ -z "${rank[$room]+x}" ]; then
    echo "harness/$room/ is not in the order of rooms (ci/check-harness-rooms.sh, docs/internals.md)"
    bad=1
    continue
  fi
  while IFS= read -r hit; do
    file=${hit%%:*}
    to=$(sed -n 's|.*#include "harness/\([a-z_]*\)/.*|\1|p' <<<"${hit#*:}")
    if [ -z "$to" ] || [ -z "${rank[$to]+x}" ]; then continue; fi
    if [ "${rank[$to]}" -gt "${rank[$room]}" ]; then
      echo "$file includes harness/$to/, a room after its own ($room)"
      bad=1
    fi
  done < <(grep -rn --include='*.h' --include='*.cc' --exclude='*_test.cc' '#include "harness/' \
             "$dir" || true)
done
if [ $bad -ne 0 ]; then
  echo "harness/: the order of its rooms does not hold (above): move the unit, or what it needs" >&2
  exit 1
fi
echo "harness/: ${#order[@]} rooms, no include points back up"
