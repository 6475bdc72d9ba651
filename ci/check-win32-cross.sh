#!/usr/bin/env bash
# The Windows code path, checked on Linux with mingw-w64 (Debian's g++-mingw-w64-x86-64-posix:
# the posix-threads flavour, which std::thread and std::mutex need):
#   1. every _win32 file and every header a Windows build compiles, -fsyntax-only, with the
#      project's warnings as errors;
#   2. none of the files a Windows build compiles includes a POSIX header that MSVC lacks
#      (mingw has some of them, so step 1 alone would not notice);
#   3. a cross build (ci/mingw-w64.cmake, FORKCHECK_HARNESS_ONLY=ON) of every translation unit
#      of the harness (forkcheck watch's included) and of the start-method library;
#   4. a smoke program linked from them (tests/win32/), run under wine when wine is installed:
#      the job-object supervisor, spawn, exit codes, on a Windows API.
# Third-party headers (Boost, nlohmann/json, CLI11, pugixml, utf8cpp) are the host's, reached
# through a directory of symlinks: never /usr/include itself, whose glibc headers would shadow
# mingw's. Not compiled for Windows yet, and so not checked: harness/main.cc (sysconf), reports/
# (O_CLOEXEC, fsync), repros/core and repros/cases (POSIX throughout); see README, "Reading the
# CI matrix".
#
# Usage: ci/check-win32-cross.sh [WORK_DIR]   (default: build-ci/win32-cross)
# Exit status 77 when the cross compiler is not installed (ctest counts that as skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=${1:-build-ci/win32-cross}
mkdir -p "$work"
work=$(cd "$work" && pwd)

cxx=x86_64-w64-mingw32-g++-posix
if ! command -v "$cxx" >/dev/null; then
  echo "SKIP: $cxx is not installed (apt-get install g++-mingw-w64-x86-64-posix;" \
       "ci/install-deps-debian.sh installs it)"
  exit 77
fi
jobs=${FORKCHECK_JOBS:-2}
warnings=(-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wconversion -Wno-sign-conversion)

# --- third-party headers, and header-only CMake packages standing in for the real ones ---------
inc="$work/include"
deps="$work/packages"
rm -rf "$inc" "$deps"
mkdir -p "$inc" "$deps"
for h in boost nlohmann CLI pugixml.hpp pugiconfig.hpp utf8.h utf8 utf8cpp; do
  [ -e "/usr/include/$h" ] && ln -s "/usr/include/$h" "$inc/$h"
done
cmake_args=()
# standin NAME VERSION TARGET...: a CMake package whose targets carry only the headers above.
standin() {
  local name=$1 version=$2 dir="$deps/$1"
  shift 2
  mkdir -p "$dir"
  {
    echo "# Written by ci/check-win32-cross.sh: header-only stand-in, no libraries."
    for t in "$@"; do
      echo "if(NOT TARGET $t)"
      echo "  add_library($t INTERFACE IMPORTED)"
      echo "  set_target_properties($t PROPERTIES INTERFACE_INCLUDE_DIRECTORIES \"$inc\")"
      echo "endif()"
    done
    echo "set(${name}_VERSION $version)"
    [ "$name" = Boost ] && echo "set(Boost_filesystem_FOUND TRUE)"
  } > "$dir/${name}Config.cmake"
  cat > "$dir/${name}ConfigVersion.cmake" <<EOF
set(PACKAGE_VERSION $version)
set(PACKAGE_VERSION_COMPATIBLE TRUE)
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
endif()
EOF
  cmake_args+=("-D${name}_DIR=$dir")
}
boost_version=$(sed -n 's/^#define BOOST_LIB_VERSION "\([0-9]*\)_\([0-9]*\).*"/\1.\2.0/p' \
                /usr/include/boost/version.hpp)
standin Boost "$boost_version" Boost::headers Boost::filesystem
standin nlohmann_json 3.11.0 nlohmann_json::nlohmann_json
standin CLI11 2.3.0 CLI11::CLI11
standin pugixml 1.13 pugixml::pugixml
standin utf8cpp 3.2 utf8cpp utf8::cpp

failed=0
fail() {
  echo "FAIL: $*"
  failed=1
}

# The files a Windows build compiles: the harness (but main.cc, not portable yet) and its watch
# side, the start-method library, the case registry; not the _posix/_linux ones, not the shim.
windows_files() {
  for f in harness/*.h harness/*.cc harness/watch/*.h harness/watch/*.cc repros/launch/*.h \
           repros/launch/*.cc repros/core/case_registry.h repros/core/case_registry.cc \
           repros/core/outcome.h; do
    case $f in
      *_posix.* | *_linux.* | harness/main.cc) ;;
      repros/launch/boost_process_v1.h) ;;  # Boost.Process: POSIX files only
      *) echo "$f" ;;
    esac
  done
}

# --- 1. -fsyntax-only, warnings as errors -----------------------------------------------------
gen="$work/generated/harness"
mkdir -p "$gen"
sed 's/@[A-Za-z_]*@/0/g' harness/version.h.in > "$gen/version.h"
syntax() {  # FILE: a source, or a header compiled on its own
  local f=$1 args=(-std=c++17 -fsyntax-only -Werror "${warnings[@]}" -I"$root" -I"$root/repros"
                   -I"$work/generated" -isystem "$inc")
  case $f in
    *.h) "$cxx" "${args[@]}" -x c++ -include "$root/$f" - </dev/null ;;
    *) "$cxx" "${args[@]}" "$root/$f" ;;
  esac
}
checked=0
while read -r f; do
  case $f in
    *_win32.* | *.h) ;;
    *) continue ;;  # the shared .cc files are compiled in step 3
  esac
  checked=$((checked + 1))
  syntax "$f" 2>"$work/syntax.err" || { fail "syntax: $f"; head -20 "$work/syntax.err"; }
done < <(windows_files)
echo "1. syntax: $checked _win32 files and headers checked"

# --- 2. no POSIX-only header that MSVC lacks ------------------------------------------------------
posix_only='unistd|dirent|fnmatch|pthread|poll|dlfcn|link|libgen|strings|termios|glob|spawn|sched'
posix_only+='|sys/(wait|socket|mman|select|time|resource|prctl|un|uio|ioctl|utsname|signalfd|syscall|epoll)'
hits=$(windows_files | xargs grep -nE "^#include <($posix_only)\.h>" || true)
if [ -n "$hits" ]; then
  fail "POSIX-only headers in files a Windows build compiles:"
  echo "$hits"
fi
echo "2. headers: $(windows_files | wc -l) files free of POSIX-only headers"

# --- 3. the cross build ------------------------------------------------------------------------
# Every object of the three libraries, by name: building the library targets would build the
# reports too (the harness links them), and linking forkcheck.exe would need them portable.
build="$work/build"
if ! cmake -S "$root" -B "$build" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$root/ci/mingw-w64.cmake" \
       -DFORKCHECK_HARNESS_ONLY=ON -DCMAKE_BUILD_TYPE=Release \
       "${cmake_args[@]}" >"$work/configure.log" 2>&1; then
  cat "$work/configure.log"
  fail "cross configure"
  exit 1
fi
mapfile -t objects < <(ninja -C "$build" -t targets all |
                       sed -n 's/^\([^:]*CMakeFiles\/fc_\(harness\|watch\|launch\)\.dir\/[^:]*\.obj\): .*/\1/p')
if ! ninja -C "$build" -k 0 -j "$jobs" "${objects[@]}" >"$work/build.log" 2>&1; then
  grep -E "error|FAILED" "$work/build.log" | head -40
  fail "cross build (log: $work/build.log)"
fi
# Warnings in the Windows files are errors; elsewhere they are shown (their owners' business).
grep -E "warning:" "$work/build.log" | sort -u | sed 's/^/   /' || true
if grep -E "warning:" "$work/build.log" | grep -q "win32"; then fail "warnings in Windows files"; fi
echo "3. cross build: ${#objects[@]} objects of fc_harness, fc_watch and fc_launch compiled for Windows"

# --- 4. the smoke program, linked, and run under wine when it is there --------------------------
if [ $failed -eq 0 ]; then
  ar=x86_64-w64-mingw32-ar
  for lib in harness launch; do  # archives, so the link takes only the objects it needs
    rm -f "$work/libfc_$lib.a"
    mapfile -t members < <(printf '%s\n' "${objects[@]}" | grep "/fc_$lib\.dir/")
    (cd "$build" && "$ar" rcs "$work/libfc_$lib.a" "${members[@]}")
  done
  link=(-std=c++17 -O1 -static -Werror "${warnings[@]}" -I"$root" -I"$root/repros"
        -I"$work/generated" -isystem "$inc")
  if "$cxx" "${link[@]}" tests/win32/smoke_child.cc -o "$work/smoke_child.exe" &&
     "$cxx" "${link[@]}" tests/win32/supervisor_smoke.cc "$work/libfc_harness.a" \
            "$work/libfc_launch.a" -o "$work/supervisor_smoke.exe"; then
    echo "4. link: supervisor_smoke.exe and smoke_child.exe"
  else
    fail "linking the smoke program"
  fi
fi
wine=$(command -v wine64 || command -v wine || { [ -x /usr/lib/wine/wine64 ] && echo /usr/lib/wine/wine64; } || true)
if [ $failed -eq 0 ] && [ -n "$wine" ]; then
  # A prefix of our own, and its wineserver ended afterwards: nothing outlives the check.
  export WINEPREFIX="$work/wine" WINEDEBUG=-all
  wineserver=$(command -v wineserver || echo /usr/lib/wine/wineserver)
  if (cd "$work" && timeout 600 "$wine" supervisor_smoke.exe smoke_child.exe) >"$work/smoke.log" 2>&1; then
    sed 's/^/   /' "$work/smoke.log"
    echo "4. run under wine: passed"
  else
    sed 's/^/   /' "$work/smoke.log"
    fail "the smoke program under wine ($work/smoke.log)"
  fi
  "$wineserver" -k 2>/dev/null || true
elif [ $failed -eq 0 ]; then
  echo "4. run: wine is not installed: the smoke program was linked, not run"
fi

if [ $failed -ne 0 ]; then
  echo "check-win32-cross: FAILED"
  exit 1
fi
echo "check-win32-cross: ok"
