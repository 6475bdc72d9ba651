#!/usr/bin/env bash
# `forkcheck all`'s wall time, median of N runs (default 5), side by side with the 13 cases the
# catalog had before issue 19 (`forkcheck run` of those): the two alternate, so that both see the
# same machine. The target: `forkcheck all` at or under 8 s median on the 2-core dev VM, idle.
# Usage: ci/bench-all.sh [N] [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
build=${2:-build}
forkcheck="$build/bin/forkcheck"
[ -x "$forkcheck" ] || { echo "bench-all: $forkcheck is not built" >&2; exit 2; }
old_cases=(autograd-after-fork cuda-before-fork global-config-spawn gomp-fork-hang
           graceful-shutdown hogwild-shared-memory objc-initialize-fork selfplay-pipeline
           socket-handle-spawn state-not-shared static-init-fork tiny-nn-spawn torch-omp-pool-hang)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

seconds() {  # wall seconds of one run; the run's own exit status must be 0
  local start end
  start=$(date +%s.%N)
  "$forkcheck" "$@" --out "$scratch/out" >"$scratch/log" 2>&1 || {
    echo "bench-all: forkcheck $* failed:" >&2
    tail -5 "$scratch/log" >&2
    exit 1
  }
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f\n", b - a }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

all_n=$("$forkcheck" list --json | grep -c '"skip_reason"' || true)
echo "forkcheck all ($(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg) before): $runs runs each, alternating"
: >"$scratch/all"
: >"$scratch/old"
for i in $(seq "$runs"); do
  seconds run "${old_cases[@]}" >>"$scratch/old"
  seconds all >>"$scratch/all"
  echo "  run $i: old 13 cases $(tail -1 "$scratch/old") s, all $(tail -1 "$scratch/all") s"
done
old=$(median <"$scratch/old")
all=$(median <"$scratch/all")
echo "median wall: the 13 cases before issue 19 ${old} s; forkcheck all ${all} s (${all_n} variants)"
awk -v a="$all" -v o="$old" 'BEGIN { printf "all / old: %.2f\n", a / o }'
