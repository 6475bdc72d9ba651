#!/usr/bin/env bash
# ctest ci.wheel_platform: the wheel's platform tag (ci/wheel-platform.sh) from what its files
# need. On macOS (uname and otool stood in for: this machine has no macOS) the newest minimum
# macOS of any Mach-O file, LC_BUILD_VERSION's minos or LC_VERSION_MIN_MACOSX's version, with
# the minor 0 from macOS 11 on (all pip installs); a file otool cannot read is no Mach-O file. On
# Linux, the newest glibc symbol version this machine's own programs need.
set -euo pipefail
script=$(cd "$(dirname "$0")/../.." && pwd)/ci/wheel-platform.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
mkdir -p "$work/tools"
# uname: Darwin and the machine FAKE_MACHINE; otool -l FILE: the load commands the file holds
# (its own text: a stand-in "Mach-O" file is the otool output of one).
cat >"$work/tools/uname" <<'SH'
#!/bin/sh
case $1 in -s) echo Darwin ;; -m) echo "$FAKE_MACHINE" ;; esac
SH
cat >"$work/tools/otool" <<'SH'
#!/bin/sh
case $(head -c 4 "$2") in Load) cat "$2" ;; *) echo "$2: is not an object file" >&2; exit 1 ;; esac
SH
chmod +x "$work/tools/uname" "$work/tools/otool"
macho() {  # FILE CMD KEY VERSION: a Mach-O stand-in whose one version command says VERSION
  mkdir -p "$(dirname "$1")"
  printf 'Load command 9\n      cmd %s\n  cmdsize 32\n %s %s\n      sdk 14.4\n' "$2" "$3" "$4" >"$1"
  chmod +x "$1"
}
expect() {  # STAGE MACHINE EXPECTED
  local got
  got=$(PATH="$work/tools:$PATH" FAKE_MACHINE=$2 bash "$script" "$1" 2>&1) || got="failed: $got"
  if [ "$got" != "$3" ]; then
    echo "FAIL: $1 on $2: got '$got', expected '$3'"
    fail=1
  fi
}
stage=$work/a
macho "$stage/bin/forkcheck" LC_BUILD_VERSION minos 11.0
macho "$stage/libexec/forkcheck/forkcheck-repro" LC_BUILD_VERSION minos 14.2
macho "$stage/lib/forkcheck/libomp.dylib" LC_VERSION_MIN_MACOSX version 10.15
mkdir -p "$stage/share/forkcheck" && echo 'print(1)' >"$stage/share/forkcheck/boot.py"
printf '#!/bin/sh\necho not Mach-O\n' >"$stage/bin/script" && chmod +x "$stage/bin/script"
expect "$stage" arm64 macosx_14_0_arm64
stage=$work/b
macho "$stage/bin/forkcheck" LC_VERSION_MIN_MACOSX version 10.13
macho "$stage/lib/forkcheck/libboost.dylib" LC_VERSION_MIN_MACOSX version 10.9
expect "$stage" x86_64 macosx_10_13_x86_64
stage=$work/c
macho "$stage/bin/forkcheck" LC_BUILD_VERSION minos 13.0
macho "$stage/lib/forkcheck/libpugixml.1.dylib" LC_BUILD_VERSION minos 10.15
expect "$stage" x86_64 macosx_13_0_x86_64
stage=$work/d
mkdir -p "$stage/bin" && printf '#!/bin/sh\n' >"$stage/bin/forkcheck" && chmod +x "$stage/bin/forkcheck"
expect "$stage" arm64 "failed: wheel-platform: no Mach-O file with a minimum macOS in $stage"
# This machine's own: a program it built needs its glibc.
if [ "$(uname -s)" = Linux ] && command -v objdump >/dev/null; then
  mkdir -p "$work/linux/bin" && cp "$(command -v bash)" "$work/linux/bin/"
  glibc=$(getconf GNU_LIBC_VERSION | sed 's/glibc 2\.//')
  got=$(bash "$script" "$work/linux")
  if ! [[ $got =~ ^manylinux_2_([0-9]+)_$(uname -m)$ ]] || [ "${BASH_REMATCH[1]}" -gt "$glibc" ]; then
    echo "FAIL: bash's own tag $got (glibc 2.$glibc here)"
    fail=1
  fi
fi
[ "$fail" = 0 ] && echo "PASS: the wheel's platform tags"
exit "$fail"
