#!/usr/bin/env bash
# Cold build times, side by side: the working tree against an earlier commit, each built from
# nothing (a fresh copy, a fresh build folder, ccache off) the way ci/build.sh builds it:
#   harness  FORKCHECK_PARTS=harness: exec, watch, matrix, diff, env (no libtorch, no OpenMP)
#   all      everything `forkcheck all` needs, no tests
#   tests    (with --tests) the test command's build: everything and the tests
# The two trees are built turn about (earlier harness, ours, earlier all, ours...) so that a
# change in the machine's load touches both sides alike; the load average is printed with them.
#
# Usage: ci/bench-build.sh [--tests] [--runs N] REV
#   REV      the earlier commit (340d958 is the last before unity builds and -g1)
#   --runs   builds of each kind per side (default 1); the median is printed
# Needs what ci/build.sh needs (ci/install-deps-debian.sh). Writes only under a temporary folder.
set -euo pipefail
cd "$(dirname "$0")/.."
kinds=(harness all)
runs=1
rev=""
while [ $# -gt 0 ]; do
  case $1 in
    --tests) kinds+=(tests) ;;
    --runs) runs=$2; shift ;;
    -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench-build: unknown option $1" >&2; exit 2 ;;
    *) rev=$1 ;;
  esac
  shift
done
if [ -z "$rev" ]; then
  echo "bench-build: name the earlier commit to compare with (e.g. ci/bench-build.sh 340d958)" >&2
  exit 2
fi
if ! base=$(git rev-parse --short "$rev^{commit}" 2>/dev/null); then
  echo "bench-build: $rev is not a commit of this repository" >&2
  exit 2
fi
case $runs in '' | *[!0-9]* | 0) echo "bench-build: --runs takes a positive number" >&2; exit 2 ;; esac

scratch=$(mktemp -d "${TMPDIR:-/tmp}/forkcheck-bench-build.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# The two sources: the earlier commit as committed, the working tree as it is (uncommitted edits
# and new files included, ignored ones not).
mkdir -p "$scratch/base" "$scratch/ours"
git archive "$base" | tar -x -C "$scratch/base"
git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
  tar -c --null -T - | tar -x -C "$scratch/ours"

jobs=${FORKCHECK_JOBS:-$(nproc)}
export CCACHE_DISABLE=1  # ccache stays installed, but neither side may read or fill it
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

# build SIDE KIND: seconds for configure and build, from nothing.
build() {
  local src="$scratch/$1" dir="$scratch/build-$1-$2" args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
  case $2 in
    harness) args+=(-DFORKCHECK_PARTS=harness -DFORKCHECK_BUILD_TESTS=OFF) ;;
    all) args+=(-DFORKCHECK_BUILD_TESTS=OFF) ;;
    tests) args+=(-DFORKCHECK_BUILD_TESTS=ON) ;;
  esac
  rm -rf "$dir"
  local t0 t1
  t0=$(date +%s.%N)
  if ! { cmake "${generator[@]}" -S "$src" -B "$dir" "${args[@]}" &&
         cmake --build "$dir" -j "$jobs"; } >"$scratch/$1-$2.log" 2>&1; then
    tail -n 30 "$scratch/$1-$2.log" >&2
    echo "bench-build: the $2 build of $1 failed" >&2
    exit 1
  fi
  t1=$(date +%s.%N)
  rm -rf "$dir"
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f\n", b - a }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

echo "cold builds (configure + build, ccache off), $jobs jobs on $(nproc) CPUs," \
     "$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //' || uname -m)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
declare -A took
for kind in "${kinds[@]}"; do
  for side in base ours; do : >"$scratch/$side-$kind.times"; done
  for _ in $(seq "$runs"); do
    for side in base ours; do
      build "$side" "$kind" >>"$scratch/$side-$kind.times"
    done
  done
  for side in base ours; do took[$side-$kind]=$(median <"$scratch/$side-$kind.times"); done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
# The issue's limits (issue 32): harness 90 s, all 300 s; the tests' build has none of its own.
declare -A limit=([harness]=90 [all]=300 [tests]="")
printf '%-9s %12s %14s %8s %10s\n' "build" "$base" "working tree" "ratio" "limit"
for kind in "${kinds[@]}"; do
  b=${took[base-$kind]} o=${took[ours-$kind]} l=${limit[$kind]}
  verdict=""
  if [ -n "$l" ]; then
    if [ "$o" -le "$l" ]; then verdict="$l s, within"; else verdict="$l s, OVER"; fi
  fi
  printf '%-9s %10s s %12s s %7sx %s\n' "$kind" "$b" "$o" \
    "$(awk -v b="$b" -v o="$o" 'BEGIN { printf "%.1f", (o > 0 ? b / o : 0) }')" "$verdict"
done
