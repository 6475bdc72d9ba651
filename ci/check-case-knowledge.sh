#!/usr/bin/env bash
# A case's knowledge lives in its catalog entry (repros/cases/*.cc: explains, shows_as,
# environment_topics, featured), carried in the run: reports/ reads it from there and never
# names a case. Fails naming each line of reports/ that holds a case id.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t ids < <(sed -n 's/^ *c\.id = "\([^"]*\)";.*/\1/p' repros/cases/*.cc | sort -u)
if [ "${#ids[@]}" -eq 0 ]; then
  echo "no case id found in repros/cases/*.cc: the check would pass on anything" >&2
  exit 1
fi
patterns=()
for id in "${ids[@]}"; do patterns+=(-e "$id"); done
if grep -rnF "${patterns[@]}" reports/; then
  echo "reports/ names a case (above): put what it knows of the case in the case's catalog entry" >&2
  exit 1
fi
echo "reports/ names none of the catalog's ${#ids[@]} cases"
