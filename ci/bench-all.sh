#!/usr/bin/env bash
# `forkcheck all`'s own cost: median wall time and CPU seconds over N runs (default 5), beside the
# figure issue 24 started from on the 2-core development VM (7.3 s wall, 12.0 CPU-s; the target
# is at most 5 s and 8 CPU-s), and how soon each expected hang was called after its hazardous
# step (the target: at most 1 s). CPU seconds are those of forkcheck and every process it
# started: its children's rusage, which counts the orphans it reaps as a child subreaper (on
# Linux a cgroup's cpuacct gave the same figure to 0.1 s).
#
# With a second build folder, the two builds' `forkcheck all` alternate, run for run, so that
# both see the same machine: compare figures only when taken side by side like this. The
# machine's speed varies over a day (a shared VM).
# Usage: ci/bench-all.sh [N] [BUILD_DIR] [BASELINE_BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
build=${2:-build}
baseline=${3:-}
old_wall=7.3 old_cpu=12.0       # issue 24, before the work on its item 7
target_wall=5 target_cpu=8 target_hang=1
for b in "$build" ${baseline:+"$baseline"}; do
  [ -x "$b/bin/forkcheck" ] || { echo "bench-all: $b/bin/forkcheck is not built" >&2; exit 2; }
done
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# One run of `forkcheck all` from build $1, labelled $2: appends "wall cpu" to $scratch/$2 and
# the seconds from each hang's hazardous step to its call to $scratch/$2.hangs. The run's own
# exit status must be 0.
one_run() {
  local b=$1 label=$2 out="$scratch/out-$2"
  # A fresh shell per run, so that `times` (its second line: the user and system time of the
  # processes it waited for, and of theirs) counts this run alone; run in that shell itself, not
  # in a subshell, whose counts start again at zero.
  # shellcheck disable=SC2016  # expanded by the inner shell
  bash -c 'busy() { head -1 /proc/stat 2>/dev/null | awk "{ print \$2 + \$3 + \$4 + \$7 + \$8 + \$9 }"; }
           busy >"$2.busy0"; date +%s.%N >"$2.start"
           "$1" all --out "$2" >"$2.log" 2>&1 || echo "rc=$?" >"$2.failed"
           date +%s.%N >"$2.end"; busy >"$2.busy1"
           times >"$2.times"' _ "$b/bin/forkcheck" "$out"
  if [ -f "$out.failed" ]; then
    echo "bench-all: $b/bin/forkcheck all failed ($(cat "$out.failed")):" >&2
    tail -5 "$out.log" >&2
    exit 1
  fi
  # times prints minutes and seconds: 0m7.512s 0m2.301s. The third figure: what the whole
  # machine used meanwhile beyond this run (/proc/stat, in USER_HZ ticks), so that a run slowed
  # by other work shows it.
  local hz
  hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
  awk -v a="$(cat "$out.start")" -v b="$(cat "$out.end")" -v hz="$hz" \
      -v b0="$(cat "$out.busy0")" -v b1="$(cat "$out.busy1")" 'NR == 2 {
        split($1, u, "m"); split($2, s, "m"); cpu = u[1] * 60 + u[2] + s[1] * 60 + s[2];
        others = (b0 == "" || b1 == "") ? 0 : (b1 - b0) / hz - cpu;
        printf "%.2f %.2f %.2f\n", b - a, cpu, others < 0 ? 0 : others }' "$out.times" \
    >>"$scratch/$label"
  python3 - "$out/run.jsonl" >>"$scratch/$label.hangs" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("type") == "variant" and r.get("outcome") == "hang" and "hang" in r:
        print("%.3f %s/%s" % (r["hang"]["waited_s"], r["case"], r["name"]))
EOF
  rm -rf "$out" "$out".*
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
summary() {  # label, name
  local wall cpu hang slowest
  wall=$(cut -d' ' -f1 "$scratch/$1" | median)
  cpu=$(cut -d' ' -f2 "$scratch/$1" | median)
  hang=$(cut -d' ' -f1 "$scratch/$1.hangs" | median)
  slowest=$(sort -g "$scratch/$1.hangs" | tail -1)
  printf "%-9s median %5.2f s wall, %5.2f CPU-s; hangs called %.2f s after their step (median), at most %s\n" \
    "$2" "$wall" "$cpu" "$hang" "$slowest"
}

variants=$("$build/bin/forkcheck" list --json | grep -c '"skip_reason"' || true)
echo "(others: CPU-s that other processes on the machine used during the run; compare quiet runs)"
echo "forkcheck all, $variants variants ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg) before): $runs runs${baseline:+ each, alternating with $baseline}"
for label in new old; do : >"$scratch/$label"; : >"$scratch/$label.hangs"; done
for i in $(seq "$runs"); do
  line="  run $i:"
  if [ -n "$baseline" ]; then
    one_run "$baseline" old
    line+=" $baseline $(tail -1 "$scratch/old" | awk '{ print $1 " s, " $2 " CPU-s (others " $3 ")" }');"
  fi
  one_run "$build" new
  echo "$line $build $(tail -1 "$scratch/new" | awk '{ print $1 " s, " $2 " CPU-s (others " $3 ")" }')"
done
echo "before issue 24's item 7: ${old_wall} s wall, ${old_cpu} CPU-s (median, this machine); the target: at most ${target_wall} s, ${target_cpu} CPU-s, hangs called within ${target_hang} s"
if [ -n "$baseline" ]; then summary old "$baseline"; fi
summary new "$build"
