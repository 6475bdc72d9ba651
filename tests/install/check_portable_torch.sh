#!/usr/bin/env bash
# ctest install.portable_torch: the portable build's torch kit (cmake/ForkcheckTorchKit.cmake),
# used as a user of the archive or the wheel uses it, against this machine's Python torch
# (Debian's python3-torch, whose CMake package is libtorch-dev's), with a cache of its own:
#   1. `list` before any build: the torch cases are named, not built yet, and how they will be;
#   2. no cmake on PATH: `run` of a torch case says why it cannot run (exit status 1); during a
#      build, a second forkcheck does not build too and says who holds it; Ctrl-C ends the build,
#      says so, and keeps nothing of it;
#   3. `run` of two torch cases builds them first, saying so before it starts and as it goes,
#      then runs them against the torch python3 imports, and the reports say which it was;
#   4. `list` after: the torch cases listed with their libtorch; a second `run` builds nothing.
# The build's time is printed (ccache off): reports/torch_cases.cc quotes it.
#   check_portable_torch.sh BUILD
# Exit 77 (skipped) where /usr/bin/python3 has no torch.
set -euo pipefail
build=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
python=/usr/bin/python3
"$python" -c 'import torch' 2>/dev/null || { echo "skipped: $python has no torch"; exit 77; }
stage=$(find "$build/stage" -mindepth 1 -maxdepth 1 -name 'forkcheck-*' -type d 2>/dev/null | head -1)
[ -n "$stage" ] || fail "no portable staging folder under $build/stage (install.portable makes it)"
[ -f "$stage/share/forkcheck/torch-kit/manifest.json" ] || fail "the package holds no torch kit"
forkcheck=$stage/bin/forkcheck

work=$(mktemp -d /tmp/forkcheck-portable-torch.XXXXXX)
trap 'rm -rf "$work"' EXIT
unset FORKCHECK_REPRO_DIR FORKCHECK_WATCH_SHIM FORKCHECK_SCHEMA FORKCHECK_PY_BOOTSTRAP \
  FORKCHECK_TORCH_KIT CXX
export XDG_CACHE_HOME=$work/cache CCACHE_DISABLE=1
# python3 is the interpreter with torch, first on PATH.
mkdir -p "$work/bin" "$work/bare"
ln -s "$python" "$work/bin/python3"
ln -s "$python" "$work/bare/python3"
export PATH=$work/bin:$PATH
cd "$work"

# 1. Before any build.
"$forkcheck" list >list-before.log || { cat list-before.log; fail "list failed"; }
grep -q "torch cases: not built yet (autograd-after-fork, tiny-nn-spawn, " list-before.log ||
  { cat list-before.log; fail "list does not name the torch cases not built yet"; }
grep -q "forkcheck all\` (or \`forkcheck run\` of one of them) builds them on first use against the torch $work/bin/python3 imports" \
  list-before.log || fail "list does not say how they will be built"

# 2. No cmake: the case is not run, and why (a PATH with python3 alone).
status=0
PATH=$work/bare "$forkcheck" run autograd-after-fork --out "$work/no-cmake" >no-cmake.log 2>&1 ||
  status=$?
[ "$status" = 1 ] || { cat no-cmake.log; fail "run without cmake exited $status, not 1"; }
grep -q "autograd-after-fork is a torch case: none run (.*): building them against the torch $work/bare/python3 imports (.*) needs CMake: no cmake in PATH or beside $work/bare/python3" \
  no-cmake.log || { cat no-cmake.log; fail "run without cmake does not say why"; }
[ ! -d "$work/cache/forkcheck/torch-cases" ] || [ -z "$(ls -A "$work/cache/forkcheck/torch-cases")" ] ||
  fail "a build folder was made without cmake"

# 2b. Ctrl-C during the build: it ends, says so, and keeps nothing of it (130: SIGINT's status).
"$forkcheck" run autograd-after-fork --out "$work/interrupted" >interrupted.log 2>&1 &
pid=$!
for _ in $(seq 600); do  # until the compiler has started (a bound, not a measurement)
  grep -q "Building CXX" "$work"/cache/forkcheck/torch-cases/*/build.log 2>/dev/null && break
  sleep 0.5
done
# A second forkcheck meanwhile: it does not build them too, and says why they did not run.
status=0
"$forkcheck" run autograd-after-fork --out "$work/second" >second.log 2>&1 || status=$?
[ "$status" = 1 ] || { cat second.log; fail "a second run during the build exited $status, not 1"; }
grep -q "autograd-after-fork is a torch case: none run (.*): another forkcheck (pid $pid) holds their build folder" \
  second.log || { cat second.log; fail "the second run does not say who holds the build"; }
kill -INT "$pid"
status=0
wait "$pid" || status=$?
[ "$status" = 130 ] || { cat interrupted.log; fail "the interrupted build exited $status, not 130"; }
grep -q "^forkcheck: the torch cases' build was interrupted: nothing of it is kept" interrupted.log ||
  { cat interrupted.log; fail "the interruption was not said"; }
[ -z "$(find "$work/cache/forkcheck/torch-cases" -name build -type d)" ] ||
  fail "the interrupted build left its folder"
! pgrep -f "$work/cache/forkcheck/torch-cases" >/dev/null || fail "the build's processes live on"

# 3. The first run builds them.
"$forkcheck" run autograd-after-fork tiny-nn-spawn --out "$work/run" >run.log 2>&1 ||
  { tail -40 run.log; fail "the first run of two torch cases failed"; }
grep -q "^forkcheck: building the 7 torch cases against the torch $work/bin/python3 imports" run.log ||
  { head -20 run.log; fail "the build was not announced"; }
grep -Eq '^  [0-9]+ (s|min [0-9]+ s)  \[[0-9]+/[0-9]+\] ' run.log ||
  fail "the build's progress was not said"
grep -q "^forkcheck: the torch cases are built" run.log || fail "the build's end was not said"
# The program and its record are kept, not the objects.
if ! [ -x "$(echo "$work"/cache/forkcheck/torch-cases/*/bin/forkcheck-repro-torch)" ] ||
   ! [ -f "$(echo "$work"/cache/forkcheck/torch-cases/*/built.json)" ]; then
  fail "the built program or its record is not in the cache"
fi
[ -z "$(find "$work/cache/forkcheck/torch-cases" -name build -type d)" ] ||
  fail "the build's objects were kept"
"$python" - "$work/run/report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
env = report["run"]["environment"]
t = env["torch_cases"]
assert t["source"] == "built-here" and t.get("built_now"), t
assert len(t["cases"]) == 7, t["cases"]
assert env["libtorch"]["version"].startswith("1.13"), env.get("libtorch")
ran = {c["id"]: c for c in report["cases"]}
assert sorted(ran) == ["autograd-after-fork", "tiny-nn-spawn"], sorted(ran)
for c in ran.values():
    for v in c["variants"]:
        assert v["matched"], (c["id"], v["name"], v["outcome"], v.get("message"))
print("built the torch program from the kit in %.0f s with %d jobs (torch %s); ran %d variants as "
      "documented" % (t["build_s"], t["jobs"], t["torch"],
                      sum(len(c["variants"]) for c in ran.values())))
PY
grep -q "torch cases: 7 (autograd-after-fork, .*), built here against the torch" "$work/run/summary.md" ||
  fail "summary.md does not say against which torch the cases were built"

# 4. After: listed, and built only once.
"$forkcheck" list >list-after.log || { cat list-after.log; fail "list failed after the build"; }
grep -q "^autograd-after-fork " list-after.log || fail "list does not list the torch cases after the build"
grep -q "libtorch: 1.13" list-after.log || fail "list does not name their libtorch"
"$forkcheck" run autograd-after-fork --out "$work/again" >again.log 2>&1 ||
  { tail -20 again.log; fail "the second run failed"; }
! grep -q "building the" again.log || fail "the second run built them again"
echo "PASS: the kit builds the torch cases against python3's torch on first use, once"
