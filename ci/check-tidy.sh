#!/usr/bin/env bash
# clang-tidy (.clang-tidy's checks, warnings as errors) on the C++ sources a change touched: the
# .cc files that differ from BASE (FORKCHECK_TIDY_BASE, default HEAD~1: the commit under test; a
# pull request's workflow sets its target branch) and that BUILD_DIR's compile_commands.json
# compiles, less the torch program's (libtorch's headers take a minute each to parse; the
# compiler's warnings cover them). Headers are checked through the sources that include them.
# Exit status 77 when clang-tidy is not installed or there is no BASE to compare with.
# Usage: check-tidy.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
base=${FORKCHECK_TIDY_BASE:-HEAD~1}
if ! command -v clang-tidy >/dev/null; then
  echo "SKIP: clang-tidy is not installed (ci/install-deps-debian.sh installs it)"
  exit 77
fi
if ! git rev-parse --verify -q "$base^{commit}" >/dev/null; then
  echo "SKIP: no $base to compare with (a clone without history)"
  exit 77
fi
if [ ! -f "$build/compile_commands.json" ]; then
  echo "FAIL: no $build/compile_commands.json (CMAKE_EXPORT_COMPILE_COMMANDS is on in CMakeLists.txt)"
  exit 1
fi
mapfile -t changed < <(git diff --name-only --diff-filter=AMR "$base" -- '*.cc')
# A unity build (FORKCHECK_UNITY_BUILD) compiles its sources a batch at a time, and the database
# names the batches: each source it includes gets the batch's command as its own, so that
# clang-tidy sees the source alone (an include missing from it, hidden by its batch, shows).
db=$(mktemp -d)
trap 'rm -rf "$db"' EXIT
mapfile -t files < <(python3 - "$build/compile_commands.json" "$PWD" "$db" "${changed[@]}" <<'PY'
import json, os, re, sys
db, root, out, changed = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
entries = []
for e in json.load(open(db)):
    f = os.path.realpath(os.path.join(e["directory"], e["file"]))
    if "/Unity/unity_" not in f:
        entries.append(dict(e, file=f))
        continue
    for src in re.findall(r'^#include "(.*)"$', open(f).read(), re.M):
        one = dict(e, file=os.path.realpath(src))
        if "arguments" in one:
            one["arguments"] = [src if a == e["file"] else a for a in one["arguments"]]
        else:
            one["command"] = one["command"].replace(e["file"], src)
        entries.append(one)
json.dump(entries, open(os.path.join(out, "compile_commands.json"), "w"))
compiled = {e["file"]: e.get("command", " ".join(e.get("arguments", []))) for e in entries}
for c in changed:
    f = os.path.realpath(os.path.join(root, c))
    if f in compiled and "torch/csrc/api/include" not in compiled[f]:
        print(c)
PY
)
if [ "${#files[@]}" -eq 0 ]; then
  echo "clang-tidy: no compiled C++ source changed since $base (${#changed[@]} changed .cc)"
  exit 0
fi
jobs=$(nproc 2>/dev/null || echo 2)
log=$db/tidy.log
status=0
printf '%s\n' "${files[@]}" |
  xargs -P "$jobs" -n 4 clang-tidy -p "$db" --quiet >"$log" 2>&1 || status=$?
grep -vE '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$|^Suppressed [0-9]+ warnings|^Use -header-filter|^[0-9]+ warnings? treated as errors' "$log" || true
if [ $status -ne 0 ]; then
  echo "FAIL: clang-tidy found the above in the ${#files[@]} sources changed since $base"
  exit 1
fi
echo "clang-tidy ($(clang-tidy --version | grep -o 'version [0-9.]*')): ${#files[@]} sources changed since $base clean"
