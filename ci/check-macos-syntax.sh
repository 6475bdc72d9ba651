#!/usr/bin/env bash
# The macOS code path, checked on Linux as far as it can be without Apple's SDK: every source of
# the harness, the launch library, the repro core and the native cases that a macOS build
# compiles and that differs from Linux's (the _mac, _posix and _other siblings, and the files
# with __APPLE__ branches), -fsyntax-only with the project's warnings, __APPLE__ defined and
# __linux__ not. Warnings are errors in the _mac and _posix files; elsewhere (the _other
# siblings, shared with Windows) they are shown: their owners' business. Apple's own headers
# (libproc, sysctl, proc_info, dyld, Mach, the Objective-C runtime) are stand-ins
# (ci/macos-stubs/, copied from Apple's open-source headers, only the parts used); the C library,
# the C++ library and Boost are the host's. So it catches a misspelt Apple name, field or
# signature, a Linux-only call left in a macOS path and a warning; not what only the real SDK or
# libc++ would reject. The torch cases need libtorch for macOS, which is not here: none of them
# has a macOS branch but shared_lock_mac.cc, which is checked.
#
# Usage: ci/check-macos-syntax.sh. Exit status 77 when no C++ compiler is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

cxx=${CXX:-}
if [ -z "$cxx" ]; then cxx=$(command -v clang++ || command -v g++ || true); fi
if [ -z "$cxx" ]; then
  echo "SKIP: no C++ compiler (clang++ or g++)"
  exit 77
fi
warnings=(-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wconversion -Wno-sign-conversion)

gen=$(mktemp -d)
trap 'rm -rf "$gen"' EXIT
mkdir -p "$gen/harness"
sed 's/@[A-Za-z_]*@/0/g' harness/version.h.in > "$gen/harness/version.h"
sed 's/@[A-Za-z_]*@/0/g' harness/install_dirs.h.in > "$gen/harness/install_dirs.h"

mapfile -t files < <(
  for f in harness/*.cc harness/*/*.cc repros/launch/*.cc repros/core/*.cc repros/cases/*.cc \
           repros/cases/support/*.cc; do
    case $f in
      *_linux.cc | *_win32.cc | *_test.cc | *_test_workers.cc | */launch_no_init_main.cc) ;;
      repros/cases/support/objc_probe_other.cc) ;;  # macOS builds objc_probe_mac.cc instead
      *_mac.cc | *_posix.cc | *_other.cc) echo "$f" ;;
      *) if grep -q "__APPLE__" "$f"; then echo "$f"; fi ;;
    esac
  done)

# Compiled in batches, as the unity build compiles a target's: one translation unit per folder
# (harness/, repros/launch, repros/core, repros/cases), the _mac and _posix files apart from the
# rest for their -Werror. The headers they share are
# parsed once per unit rather than once per file; an error still names its file and line.
failed=0
units=$gen/units
mkdir -p "$units"
for f in "${files[@]}"; do
  case $f in
    harness/*) group=harness ;;
    repros/launch/*) group=launch ;;
    repros/core/*) group=core ;;
    *) group=cases ;;
  esac
  case $f in *_mac.cc | *_posix.cc) group+=-werror ;; esac
  echo "#include \"$root/$f\"" >>"$units/$group.cc"
done
for unit in "$units"/*.cc; do
  werror=()
  case $unit in *-werror.cc) werror=(-Werror) ;; esac
  if ! "$cxx" -std=c++17 -fsyntax-only ${werror[@]+"${werror[@]}"} "${warnings[@]}" \
         -U__linux__ -U__gnu_linux__ -Ulinux -D__APPLE__ -D__MACH__ \
         -isystem "$root/ci/macos-stubs" -I"$root" -I"$root/include" -I"$root/repros" -I"$gen" \
         "$unit"; then
    echo "FAIL: $(sed 's/^#include "\(.*\)"$/\1/' "$unit" | sed "s|^$root/||" | tr '\n' ' ')"
    failed=1
  fi
done
echo "macOS syntax ($(basename "$cxx")): ${#files[@]} files checked: ${files[*]}"
if [ $failed -ne 0 ]; then
  echo "check-macos-syntax: FAILED"
  exit 1
fi
echo "check-macos-syntax: ok"
