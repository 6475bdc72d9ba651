#!/usr/bin/env bash
# The CUDA checks that need a real NVIDIA GPU and a CUDA build of torch (no CI runner has them):
# the cuda-before-fork case, and exec, watch and matrix on the programs in
# tests/python_programs/cuda/. Each program is first run plainly, so that what forkcheck is
# checked against is what the program itself did on this machine.
# Usage: ci/check-cuda.sh [FORKCHECK [PYTHON [OUTDIR]]]   (exit 0: every check held)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
fc=${1:-forkcheck}
py=${2:-python3}
out=${3:-cuda-check}
progs=$here/tests/python_programs/cuda
mkdir -p "$out"
failed=0

check() {  # check WHAT PYTHON-EXPRESSION-ON-v (v: the variants in DIR/report.json) DIR
  "$py" - "$1" "$2" "$3/report.json" <<'PY' || failed=1
import json, sys
what, expr, path = sys.argv[1:4]
try:
    v = json.load(open(path))["cases"][0]["variants"]
    ok = bool(eval(expr, {"v": v}))
except (OSError, ValueError, KeyError, IndexError) as e:
    v, ok = [], False
    print("    no report to check:", e)
print("PASS" if ok else "FAIL", what)
for x in v:
    print("    %s: %s (%s)" % (x["name"], x["outcome"], " ".join(x["message"].split())[:200]))
sys.exit(0 if ok else 1)
PY
}

explained='any(e["case"] == "cuda-before-fork" for e in v[0]["details"].get("explained_by", []))'

if ! "$py" -c 'import sys, torch
print("torch", torch.__version__, "CUDA", torch.version.cuda, "devices", torch.cuda.device_count())
sys.exit(0 if torch.cuda.is_available() else 1)'; then
  echo "$py has no torch that sees a CUDA device: nothing checked" >&2
  exit 2
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

"$fc" run cuda-before-fork --out "$out/case" >"$out/case.log" 2>&1
echo "run cuda-before-fork: exit $?"
check "cuda-before-fork: fork fails as the case expects, spawn works" \
  'all(x["matched"] for x in v) and {x["start_method"]: x["outcome"] for x in v} == {"fork": "error", "spawn": "ok"}' \
  "$out/case"

plainly() {  # plainly PROG WANT: runs it without forkcheck; WANT fail: it must fail naming the
  # re-initialisation, ok: it must end with 0 (what forkcheck is then checked against)
  local prog=$1 want=$2 rc lines
  "$py" "$progs/$prog.py" >"$out/$prog.plain.log" 2>&1
  rc=$?
  lines=$(grep -c "Cannot re-initialize CUDA" "$out/$prog.plain.log")
  if { [ "$want" = fail ] && [ "$rc" -ne 0 ] && [ "$lines" -gt 0 ]; } ||
    { [ "$want" = ok ] && [ "$rc" -eq 0 ]; }; then
    echo "PASS $prog plainly: exit $rc, $lines lines naming the re-initialisation"
  else
    echo "FAIL $prog plainly: exit $rc, $lines lines naming the re-initialisation (wanted: $want)"
    failed=1
  fi
}

plainly pool_after_cuda fail
plainly dataloader_after_cuda fail
plainly pool_before_cuda ok
for prog in pool_after_cuda dataloader_after_cuda pool_before_cuda; do
  "$fc" exec --out "$out/exec-$prog" -- "$py" "$progs/$prog.py" >"$out/exec-$prog.log" 2>&1
  echo "exec $prog: exit $?"
  "$fc" watch --out "$out/watch-$prog" -- "$py" "$progs/$prog.py" >"$out/watch-$prog.log" 2>&1
  echo "watch $prog: exit $?"
done
cuda_hazards='[f for f in v[0]["details"]["watch"]["findings"] if f["kind"] == "cuda"]'
for prog in pool_after_cuda dataloader_after_cuda; do
  check "exec $prog: failed, explained by cuda-before-fork" "v[0][\"outcome\"] != \"ok\" and $explained" "$out/exec-$prog"
  check "watch $prog: a CUDA hazard" "len($cuda_hazards) > 0" "$out/watch-$prog"
done
check "exec pool_before_cuda: ok" 'v[0]["outcome"] == "ok"' "$out/exec-pool_before_cuda"
check "watch pool_before_cuda: no CUDA hazard (CUDA not initialised at the fork)" \
  "len($cuda_hazards) == 0" "$out/watch-pool_before_cuda"
# torch's wheel brings OpenBLAS, whose pool is stopped by its own fork handler: not a hazard.
check "watch pool_before_cuda: no hazardous fork at all" 'v[0]["outcome"] == "ok"' \
  "$out/watch-pool_before_cuda"

"$fc" matrix --out "$out/matrix-pool_after_cuda" -- "$py" "$progs/pool_after_cuda.py" \
  >"$out/matrix-pool_after_cuda.log" 2>&1
echo "matrix pool_after_cuda: exit $?"
check "matrix pool_after_cuda: fails under fork alone" \
  '{x["start_method"]: x["outcome"] == "ok" for x in v} == {"fork": False, "spawn": True, "forkserver": True}' \
  "$out/matrix-pool_after_cuda"

exit "$failed"
