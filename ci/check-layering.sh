#!/usr/bin/env bash
# The layers include only what they link (harness -> reports -> repros, no arrow back): each
# folder's sources (its unit tests too) may include its own headers and those of the layers its
# CMake target links, nothing else. CMake cannot say this by itself: the include roots are folders
# that hold sibling layers (repros/ holds launch/, core/ and cases/), so this check does.
# Allowed, per layer (besides the standard library and third-party headers):
#   include/forkcheck  nothing of ours (the installed public header)
#   repros/launch      launch/, <forkcheck/launch.h>
#   repros/core        core/ and launch/ (fc_repro_core links fc_launch)
#   repros/cases       cases/, core/, launch/ (the repro programs link fc_repro_core)
#   reports            reports/; launch/win32.h (Windows: fc_reports links fc_launch there, for
#                      its one <windows.h>); core/outcome.h and core/quantity_text.h (the
#                      header-only vocabulary of outcomes, and the one way durations, CPU times
#                      and counts are written, both sides agree on)
#   harness            harness/, reports/, launch/ (fc_harness links fc_reports and fc_launch);
#                      core/outcome.h and core/quantity_text.h, as above
# Fails naming each include that crosses a layer.
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
checked=0
check() {  # DIR ALLOWED-PATTERN: every quoted or <forkcheck/...> include in DIR must match
  local dir=$1 allowed=$2 f line inc
  while IFS= read -r f; do
    checked=$((checked + 1))
    while IFS= read -r line; do
      inc=$(sed -E 's/^[^:]*:[0-9]+:#include [<"]([^">]*)[">].*/\1/' <<<"$line")
      if ! grep -qE "^($allowed)" <<<"$inc"; then
        echo "$line: $dir may not include $inc"
        fail=1
      fi
    done < <(grep -nE '^#include ("[^"]*/|<forkcheck/)' "$f" | sed "s|^|$f:|")
  done < <(find "$dir" -name '*.h' -o -name '*.cc' -o -name '*.c' | sort)
}
check include/forkcheck 'NOTHING$'
check repros/launch 'launch/|forkcheck/'
check repros/core 'core/|launch/|forkcheck/'
check repros/cases 'cases/|core/|launch/|forkcheck/'
check reports 'reports/|launch/win32\.h$|core/(outcome|quantity_text)\.h$'
check harness 'harness/|reports/|launch/|forkcheck/|core/(outcome|quantity_text)\.h$'
if [ "$checked" -lt 100 ]; then
  echo "only $checked files found: the check would pass on anything" >&2
  exit 1
fi
[ $fail = 0 ] && echo "layers: $checked files include only what their layer links"
exit $fail
