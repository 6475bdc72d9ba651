#!/usr/bin/env bash
# ctest package.deb: `cpack -G DEB` makes forkcheck_VERSION_ARCH.deb and forkcheck-dev_...deb;
# checks what they hold and depend on, runs forkcheck from the unpacked package, and, with
# FORKCHECK_TEST_DEB_INSTALL=1 as root (ci/run-tests.sh sets it), installs both with dpkg, runs
# `forkcheck all` and builds the example against /usr, then removes them.
#   check_package.sh BUILD WORK SOURCE
# Exit 77 (skipped) where there is no dpkg-deb or dpkg-shlibdeps.
set -euo pipefail
build=$(cd "$1" && pwd)
work=$2
source_dir=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
unset FORKCHECK_REPRO_DIR FORKCHECK_WATCH_SHIM FORKCHECK_SCHEMA
for tool in dpkg-deb dpkg-shlibdeps readelf; do
  command -v "$tool" >/dev/null || { echo "skipped: no $tool here (Debian: dpkg-dev, binutils)"; exit 77; }
done

rm -rf "$work"
mkdir -p "$work"
cpack -G DEB -B "$work" --config "$build/CPackConfig.cmake" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; fail "cpack failed"; }
shopt -s nullglob
tool_debs=("$work"/forkcheck_*.deb)
dev_debs=("$work"/forkcheck-dev_*.deb)
if [ ${#tool_debs[@]} -ne 1 ] || [ ${#dev_debs[@]} -ne 1 ]; then
  fail "expected one forkcheck and one forkcheck-dev .deb: $(ls "$work")"
fi
tool_deb=${tool_debs[0]}
dev_deb=${dev_debs[0]}

# What each holds.
contents() { dpkg-deb -c "$1" | awk '{print $6}' | sed 's|^\./||'; }
for f in usr/bin/forkcheck usr/libexec/forkcheck/forkcheck-repro \
         usr/libexec/forkcheck/forkcheck-repro-torch usr/libexec/forkcheck/forkcheck_bench_peer.py \
         usr/lib/forkcheck/libforkcheck_watch.so usr/share/forkcheck/report.schema.json \
         usr/share/doc/forkcheck/README.md usr/share/doc/forkcheck/copyright; do
  contents "$tool_deb" | grep -qx "$f" || fail "$(basename "$tool_deb") lacks $f"
done
for f in usr/include/forkcheck/launch.h usr/lib/libforkcheck_launch.a \
         usr/lib/cmake/forkcheck/forkcheckConfig.cmake \
         usr/lib/cmake/forkcheck/forkcheckConfigVersion.cmake \
         usr/lib/cmake/forkcheck/forkcheckTargets.cmake usr/share/doc/forkcheck-dev/copyright; do
  contents "$dev_deb" | grep -qx "$f" || fail "$(basename "$dev_deb") lacks $f"
done
if command -v help2man >/dev/null; then
  contents "$tool_deb" | grep -qx usr/share/man/man1/forkcheck.1 ||
    fail "$(basename "$tool_deb") lacks usr/share/man/man1/forkcheck.1"
fi
if contents "$tool_deb" | grep -E '^usr/(include|lib/cmake)/'; then fail "the tool package holds dev files"; fi
if contents "$dev_deb" | grep -E '^usr/(bin|libexec)/'; then fail "the dev package holds programs"; fi

# What each depends on: the run-time libraries' packages (from dpkg-shlibdeps), elfutils for the
# stacks, none of libtorch's own dependencies one by one; every one of them installed here,
# where the programs run.
depends=$(dpkg-deb -f "$tool_deb" Depends)
echo "forkcheck Depends: $depends"
echo "forkcheck Recommends: $(dpkg-deb -f "$tool_deb" Recommends)"
echo "forkcheck-dev Depends: $(dpkg-deb -f "$dev_deb" Depends)"
# (No libboost-filesystem: forkcheck uses none of its compiled parts, and the linker keeps no
# library a program does not use.)
for p in elfutils libc6 "libstdc\\+\\+6" libgomp1 libpugixml libtorch; do
  grep -qE "(^|, )$p" <<<"$depends" || fail "forkcheck does not depend on $p"
done
n=$(tr ',' '\n' <<<"$depends" | grep -c .)
[ "$n" -le 15 ] || fail "forkcheck depends on $n packages: libtorch's own dependencies listed one by one?"
while read -r dep; do
  name=${dep%% *}
  name=${name%%|*}
  dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q "install ok installed" ||
    fail "forkcheck depends on $name, which is not installed here"
done < <(tr ',' '\n' <<<"$depends" | sed 's/^ *//')
dev_depends=$(dpkg-deb -f "$dev_deb" Depends)
for p in nlohmann-json3-dev libboost-filesystem-dev; do
  grep -q "$p" <<<"$dev_depends" || fail "forkcheck-dev does not depend on $p"
done

# Unpacked: the programs run from the package's own tree (no debug sections, symbols kept: a
# hung repro program's stack still names its functions).
root=$work/root
dpkg-deb -x "$tool_deb" "$root"
dpkg-deb -x "$dev_deb" "$root"
for f in "$root"/usr/bin/forkcheck "$root"/usr/libexec/forkcheck/forkcheck-repro*; do
  sections=$(readelf -S "$f")
  if grep -q '\.debug_info' <<<"$sections"; then fail "$f keeps its debug sections"; fi
  grep -q '\.symtab' <<<"$sections" || fail "$f has no symbol table"
done
mkdir -p "$work/elsewhere"
cd "$work/elsewhere"
"$root/usr/bin/forkcheck" run gomp-fork-hang --only 'gomp-fork-hang/fork' --out "$work/unpacked-report" \
  >"$work/unpacked.log" 2>&1 || { cat "$work/unpacked.log"; fail "the unpacked forkcheck failed"; }
python3 - "$work/unpacked-report/report.json" "$root" <<'PY'
import json, sys
report, root = json.load(open(sys.argv[1])), sys.argv[2]
case = report["cases"][0]
assert case["program"].startswith(root + "/usr/libexec/forkcheck/"), case["program"]
fork = next(v for v in case["variants"] if v["name"] == "fork")
assert fork["outcome"] == "hang", fork["outcome"]
frames = [f for s in fork["stacks"] for f in s.get("frames", [])]
assert any("join_pool" in f for f in frames), "no named frame of the repro program:\n" + "\n".join(frames)
print("unpacked package: gomp-fork-hang/fork hangs, its stack names fc::join_pool")
PY

if [ "${FORKCHECK_TEST_DEB_INSTALL:-0}" != 1 ]; then
  echo "installing the packages: not done (set FORKCHECK_TEST_DEB_INSTALL=1, as root, to install them with dpkg, run forkcheck all from /usr/bin, and remove them)"
  exit 0
fi
[ "$(id -u)" -eq 0 ] || fail "FORKCHECK_TEST_DEB_INSTALL=1 needs root"
if dpkg-query -W -f='${Status}' forkcheck 2>/dev/null | grep -q "ok installed"; then
  echo "installing the packages: not done: a forkcheck package is already installed here"
  exit 0
fi
remove() { dpkg -r forkcheck-dev forkcheck >"$work/dpkg-remove.log" 2>&1 || cat "$work/dpkg-remove.log"; }
trap remove EXIT
trap 'exit 143' TERM INT  # ctest's timeout: still remove the packages (the EXIT trap)
dpkg -i "$tool_deb" "$dev_deb" >"$work/dpkg-install.log" 2>&1 ||
  { cat "$work/dpkg-install.log"; fail "dpkg -i failed"; }
[ "$(command -v forkcheck)" = /usr/bin/forkcheck ] || fail "forkcheck on PATH is $(command -v forkcheck)"
rc=0
forkcheck all --out "$work/installed-report" >"$work/installed-all.log" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || { tail -20 "$work/installed-all.log"; fail "/usr/bin/forkcheck all exited $rc"; }
python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
assert r['summary']['ok'] and all(c['program'].startswith('/usr/libexec/forkcheck/') for c in r['cases']), r['summary']
print('installed package: forkcheck all ran', r['summary']['cases'], 'cases from /usr/libexec/forkcheck, summary ok')
" "$work/installed-report/report.json"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if ! { cmake -S "$source_dir/examples/launch-consumer" -B "$work/consumer" "${generator[@]}" &&
        cmake --build "$work/consumer" && "$work/consumer/launch-consumer"; } >"$work/consumer.log" 2>&1; then
  cat "$work/consumer.log"
  fail "the example against /usr failed"
fi
remove
trap - EXIT
[ ! -e /usr/bin/forkcheck ] || fail "dpkg -r left /usr/bin/forkcheck"
echo "installed with dpkg, ran, removed"
