#!/usr/bin/env bash
# A wheel's first use, as the release workflow checks each wheel before it is attached: installed
# with pip (--no-index: nothing but the wheel) into a fresh venv of PYTHON, its forkcheck runs
# exec on a Python program whose Pool starts workers by the platform's default method, and the
# report says the program ended ok and that the bootstrap the wheel holds heard its processes.
#   ci/check-wheel-smoke.sh PYTHON WHEEL [WORK]
# WORK: an empty folder to do it in, left there (WORK/venv with the wheel installed,
# WORK/workers.py) for the caller to go on with; by default a temporary one, removed.
set -euo pipefail
python=$1
wheel=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
if [ -n "${3:-}" ]; then
  work=$3
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/forkcheck-wheel-smoke.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install --no-index --disable-pip-version-check -q "$wheel"
forkcheck=$work/venv/bin/forkcheck
[ -x "$forkcheck" ] || fail "pip put no forkcheck in the venv's bin/"
cat >"$work/workers.py" <<'PY'
import multiprocessing as mp


def square(x):
    return x * x


if __name__ == "__main__":
    with mp.Pool(2) as pool:
        print(sum(pool.map(square, range(10))))
PY
(cd "$work" && "$forkcheck" exec --out "$work/exec" -- "$work/venv/bin/python" "$work/workers.py") \
  >"$work/exec.log" 2>&1 || { rc=$?; cat "$work/exec.log"; fail "forkcheck exec exited $rc"; }
"$work/venv/bin/python" - "$work/exec/report.json" "$("$forkcheck" --version)" <<'PY'
import json, sys
variant = json.load(open(sys.argv[1]))["cases"][0]["variants"][0]
assert variant["outcome"] == "ok", variant.get("message")
heard = len(variant["python"]["processes"])
assert heard >= 3, "the bootstrap heard %d Python processes, not the program and its 2 workers" % heard
print("wheel smoke: forkcheck %s from the wheel: exec ok, its bootstrap heard %d Python processes"
      % (sys.argv[2], heard))
PY
