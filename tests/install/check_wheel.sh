#!/usr/bin/env bash
# ctest install.wheel: the wheel (ci/make-wheel.sh), built from the portable build that
# install.portable made, with Debian's pip, setuptools and wheel and no network, installed into a
# fresh venv of pyenv's Python 3.12 with `pip install --no-index`; from there forkcheck's exec,
# watch and matrix run a Python program of the venv's, and list and all run the catalog it holds
# (its native cases; it names the torch cases it would build against the venv's torch, and says
# why they did not run: the venv's python3 has none).
#   check_wheel.sh BUILD DIST
# Exit 77 (skipped) without pyenv's 3.12, or without the packaging tools.
set -euo pipefail
build=$1
dist=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
root=${PYENV_ROOT:-$HOME/.pyenv}
python=$(find "$root/versions" -maxdepth 3 -path '*/3.12.*/bin/python3' 2>/dev/null | sort -V | tail -1)
[ -n "$python" ] || { echo "skipped: no pyenv Python 3.12 under $root"; exit 77; }
tools=${FORKCHECK_WHEEL_PYTHON:-/usr/bin/python3}
"$tools" -c 'import setuptools, wheel, pip' 2>/dev/null ||
  { echo "skipped: $tools lacks pip, setuptools or wheel (Debian: python3-pip python3-setuptools python3-wheel)"; exit 77; }
stage=$(find "$build/stage" -mindepth 1 -maxdepth 1 -name 'forkcheck-*' -type d 2>/dev/null | head -1)
[ -n "$stage" ] || fail "no portable staging folder under $build/stage (install.portable makes it)"

rm -rf "$dist"
wheel=$(FORKCHECK_WHEEL_PYTHON=$tools bash "$(dirname "$0")/../../ci/make-wheel.sh" "$stage" "$dist" | tail -1)
[ -f "$wheel" ] || fail "no wheel: $wheel"
echo "wheel: $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB)"

work=$(mktemp -d /tmp/forkcheck-wheel-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
unset FORKCHECK_REPRO_DIR FORKCHECK_WATCH_SHIM FORKCHECK_SCHEMA FORKCHECK_PY_BOOTSTRAP \
  FORKCHECK_TORCH_KIT
export XDG_CACHE_HOME=$work/cache
# The release workflow's check of each wheel, here on this one: it leaves the venv it installed
# the wheel into ($work/venv) and its Pool program ($work/workers.py).
bash "$(dirname "$0")/../../ci/check-wheel-smoke.sh" "$python" "$wheel" "$work" ||
  fail "the release's wheel check"
# The venv active, as a user has it: its python3 (no torch) first on PATH.
export PATH=$work/venv/bin:$PATH
forkcheck=$work/venv/bin/forkcheck
cd "$work"
env_out=$("$forkcheck" env)
grep -q "executable  *$forkcheck" <<<"$env_out" || fail "forkcheck env names another executable: $env_out"
grep -q "repro programs  *$work/venv/libexec/forkcheck" <<<"$env_out" || fail "repro programs not the venv's: $env_out"
for command in exec watch matrix; do
  "$forkcheck" "$command" --out "$work/$command" -- "$work/venv/bin/python" "$work/workers.py" \
    >"$work/$command.log" 2>&1 || { rc=$?; cat "$work/$command.log"; fail "forkcheck $command exited $rc"; }
done
"$forkcheck" list >"$work/list.log" || { cat "$work/list.log"; fail "forkcheck list failed"; }
grep -q "gomp-fork-hang" "$work/list.log" || fail "list holds no native case"
grep -q "torch cases: none run (autograd-after-fork, .*): $work/venv/bin/python3 imports no torch" \
  "$work/list.log" || { cat "$work/list.log"; fail "list does not say why it has no torch case"; }
"$forkcheck" all --out "$work/all" >"$work/all.log" 2>&1 || { tail -20 "$work/all.log"; fail "forkcheck all failed"; }
grep -q "torch cases: none run (autograd-after-fork, .*): $work/venv/bin/python3 imports no torch" \
  "$work/all.log" || { tail -20 "$work/all.log"; fail "all does not say which cases it did not run"; }
"$tools" - "$work" <<'PY'
import json, sys
work = sys.argv[1]
v = json.load(open(work + "/exec/report.json"))["cases"][0]["variants"][0]
assert v["outcome"] == "ok", v.get("message")
assert len(v["python"]["processes"]) >= 3, "the bootstrap from the venv's share/ spoke"
matrix = json.load(open(work + "/matrix/report.json"))["cases"][0]["variants"]
assert sorted(x["start_method"] for x in matrix) == ["fork", "forkserver", "spawn"], matrix
assert all(x["outcome"] == "ok" for x in matrix), [x["outcome"] for x in matrix]
summary = json.load(open(work + "/all/report.json"))["summary"]
assert summary["ok"] and summary["cases"] >= 10, summary
print("from the wheel: exec heard %d Python processes; matrix ok under 3 methods; all: %d cases"
      % (len(v["python"]["processes"]), summary["cases"]))
PY
echo "PASS: the wheel installs with pip --no-index and forkcheck runs from the venv"
