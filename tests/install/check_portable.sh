#!/usr/bin/env bash
# ctest install.portable: the portable archive (ci/make-portable.sh) unpacked into an empty root
# that holds nothing of the build's (no libstdc++, Boost, pugixml or libgomp of the machine's, no
# build tree): only a Python interpreter and the libraries it links, and libgcc_s.so.1, which
# glibc loads itself when a thread exits (every glibc system has it; manylinux's policy counts it
# among the system's libraries, as it does libc and libm). There, in a private mount
# and pid namespace with its own /proc, `forkcheck exec` runs a Python program whose workers
# start by fork, spawn and forkserver (the bootstrap speaks from the archive's own copy), and
# `forkcheck run gomp-fork-hang` runs the archive's repro program on its shipped libgomp.
#   check_portable.sh BUILD DIST
# Exit 77 (skipped, once the archive is built) where this is not root, or unshare/chroot are
# missing.
set -euo pipefail
build=$1
dist=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
# Built first, whatever follows: install.wheel packs the same build.
archive=$(bash "$(dirname "$0")/../../ci/make-portable.sh" "$build" "$dist" | tail -1)
[ -f "$archive" ] || fail "no archive: $archive"
echo "archive: $archive ($(du -k "$archive" | cut -f1) KiB)"
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (a mount namespace and chroot)"; exit 77; }
for tool in unshare chroot readelf; do
  command -v "$tool" >/dev/null || { echo "skipped: no $tool here"; exit 77; }
done
python=$(readlink -f "${FORKCHECK_TEST_PYTHON:-/usr/bin/python3}")
pyver=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
stdlib=$("$python" -c 'import os; print(os.path.dirname(os.__file__))')


root=$(mktemp -d /tmp/forkcheck-portable-root.XXXXXX)
trap '[ -n "${FORKCHECK_KEEP_ROOT:-}" ] || rm -rf "$root"' EXIT
tar -xzf "$archive" -C "$root"
top=$(basename "$archive" .tar.gz)
forkcheck=/$top/bin/forkcheck

# What each of its programs needs: the C library's parts, or what it ships.
while IFS= read -r elf; do
  while IFS= read -r needed; do
    case $needed in
      libc.so.6 | libm.so.6 | libpthread.so.0 | libdl.so.2 | librt.so.1 | libgcc_s.so.1 | \
        ld-linux*.so.*) ;;
      *) [ -e "$root/$top/lib/forkcheck/$needed" ] || fail "$elf needs $needed, not in the archive" ;;
    esac
  done < <(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
done < <(find "$root/$top" -type f \( -perm -u+x -o -name '*.so*' \) -exec sh -c \
  'head -c 4 "$1" | grep -q ELF' _ {} \; -print)

# The interpreter and the libraries it links, at their own paths; its standard library is
# mounted read-only inside the namespace.
mkdir -p "$root/usr/bin" "$root$stdlib" "$root/proc" "$root/dev/shm" "$root/tmp" "$root/etc"
cp "$python" "$root/usr/bin/python3"
gcc_s=$("${CXX:-c++}" -print-file-name=libgcc_s.so.1)
for lib in $(ldd "$python" | grep -o '/[^ ]*') "$(readlink -f "$gcc_s")"; do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
touch "$root/dev/null"
[ -d "/etc/python$pyver" ] && mkdir -p "$root/etc/python$pyver"
cat >"$root/tmp/workers.py" <<'PY'
import multiprocessing as mp


def square(x):
    return x * x


if __name__ == "__main__":
    for method in ("fork", "spawn", "forkserver"):
        with mp.get_context(method).Pool(2) as pool:
            assert pool.map(square, range(8)) == [x * x for x in range(8)], method
    print("workers ok")
PY
status=0
# shellcheck disable=SC2016  # expanded by the inner shell, from its arguments
unshare --mount --pid --fork --mount-proc="$root/proc" bash -c '
  set -eu
  root=$1 stdlib=$2 pyver=$3 forkcheck=$4
  mount --bind -o ro "$stdlib" "$root$stdlib"
  [ -d "/etc/python$pyver" ] && mount --bind -o ro "/etc/python$pyver" "$root/etc/python$pyver"
  mount --bind /dev/null "$root/dev/null"
  mount -t tmpfs tmpfs "$root/dev/shm"
  chroot "$root" "$forkcheck" exec --quiet --out /tmp/exec -- /usr/bin/python3 /tmp/workers.py
  chroot "$root" "$forkcheck" run gomp-fork-hang --out /tmp/run >/tmp/portable-run.log 2>&1 ||
    { cat /tmp/portable-run.log; exit 3; }
' _ "$root" "$stdlib" "$pyver" "$forkcheck" || status=$?
[ "$status" = 0 ] || fail "forkcheck in the empty root exited $status"
"$python" - "$root/tmp/exec/report.json" "$root/tmp/run/report.json" <<'PY'
import json, sys
exec_report, run_report = (json.load(open(path)) for path in sys.argv[1:])
v = exec_report["cases"][0]["variants"][0]
assert v["outcome"] == "ok", v.get("message")
processes = v["python"]["processes"]
# The parent; its fork pool's workers; the spawn pool's workers (started afresh, told by their
# --multiprocessing-fork argument); the forkserver, and its forked workers: all heard.
assert len(processes) >= 9, len(processes)
spawned = sum("--multiprocessing-fork" in (p.get("argv") or []) for p in processes)
forked = sum(p.get("born") == "fork" for p in processes)
assert spawned >= 2 and forked >= 4, (spawned, forked)
run = run_report["cases"][0]
assert all(x["matched"] for x in run["variants"]), [x["outcome"] for x in run["variants"]]
print("exec in the empty root: %d Python processes heard (%d spawned, %d forked); gomp-fork-hang: "
      "%d variants as documented" % (len(processes), spawned, forked, len(run["variants"])))
PY
echo "PASS: the portable archive runs in a root with nothing of the build's"
