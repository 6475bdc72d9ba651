#!/usr/bin/env bash
# The Windows code path, checked on Linux with mingw-w64 (Debian's g++-mingw-w64-x86-64-posix:
# the posix-threads flavour, which std::thread and std::mutex need):
#   1. -fsyntax-only, with the project's warnings as errors, on every _win32 file and every header
#      a Windows build compiles, each on its own (the portable sources are compiled in step 3);
#   1b. -fsyntax-only on the torch program's sources as a Windows build compiles them (in one
#      unit, as the unity build does), against
#      Debian's libtorch headers (when libtorch-dev is installed): mingw is no compiler PyTorch
#      supports, so C10_BUILD_MAIN_LIB (no dllimport on inline definitions) and NDEBUG (no
#      glibc-only __assert_fail) stand in for MSVC's side of c10's macros; our code is what is
#      checked, with our warnings as errors, libtorch's headers as system headers;
#   2. none of the files a Windows build compiles includes a POSIX header that MSVC lacks
#      (mingw has some of them, so step 1 alone would not notice);
#   3. a cross build (ci/mingw-w64.cmake, FORKCHECK_PARTS=native) of every translation unit of
#      the harness (forkcheck watch's and main.cc included) and of the reports, and forkcheck.exe
#      and the native repro program forkcheck-repro.exe linked (OpenMP: mingw's libgomp);
#   4. smoke programs linked from them (tests/win32/): supervisor_smoke (the job-object
#      supervisor, spawn, exit codes), repro_smoke (forkcheck-repro.exe under that supervisor: its
#      catalog, its environment, every variant it does not skip on Windows), shared_lock_smoke
#      (hogwild-shared-memory's cross-process lock) and record_queue_smoke (selfplay-pipeline's
#      queue);
#   5. those run under wine, when wine is installed;
#   6. forkcheck.exe run under wine as a user runs it (tests/win32/check_forkcheck_exe.py): `all`
#      with its four reports checked (every fork/forkserver variant skipped saying why, every
#      spawn variant run but the three that cannot), `exec` of a child that hangs, crashes or
#      leaves a grandchild, and bad input (exit 2, one line, nothing lost).
# Third-party headers (Boost, nlohmann/json, CLI11, utf8cpp) are the host's, reached through a
# directory of symlinks: never /usr/include itself, whose glibc headers would shadow mingw's.
# pugixml is compiled from its Debian source (below). Not checked, for want of what they need: the
# torch program's link (no libtorch built for mingw), the tests under tests/ but tests/win32/, and
# the macOS siblings (*_mac.*: no Apple SDK here; ci/check-macos-syntax.sh checks them against
# stand-ins).
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
for h in boost nlohmann CLI utf8.h utf8 utf8cpp; do
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
# pugixml is a compiled library, and Debian has no mingw build of it: its source, the installed
# version's from the Debian archive (ci/fetch-debian-source.sh, kept in .cache/), compiled in
# pugixml's own header-only mode into the one source that includes it (the JUnit reporter).
# Without it (offline, say) steps 1-5 still run on the host's headers; forkcheck.exe is not linked,
# step 6 cannot run, and the check fails at the end saying why.
pugixml_missing=""
if pugixml_src=$(bash ci/fetch-debian-source.sh libpugixml-dev "$root/.cache/debian-src" 2>"$work/fetch.log"); then
  pugixml_version=$(dpkg-query -W -f='${Version}' libpugixml-dev)
  mkdir -p "$deps/pugixml"
  cat >"$deps/pugixml/pugixmlConfig.cmake" <<EOF
# Written by ci/check-win32-cross.sh: pugixml compiled header-only from its Debian source.
if(NOT TARGET pugixml::pugixml)
  add_library(pugixml::pugixml INTERFACE IMPORTED)
  set_target_properties(pugixml::pugixml PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "$pugixml_src/src"
    INTERFACE_COMPILE_DEFINITIONS PUGIXML_HEADER_ONLY)
endif()
set(pugixml_VERSION ${pugixml_version%%-*})
EOF
  cmake_args+=("-Dpugixml_DIR=$deps/pugixml")
else
  why=$(grep -m1 -E "Failed to fetch|^E:" "$work/fetch.log" || tail -n 1 "$work/fetch.log")
  pugixml_missing="pugixml's source could not be fetched (${why#W: }; $work/fetch.log), so forkcheck.exe was not linked and not run"
  echo "pugixml: $pugixml_missing"
  pugixml_src=$inc
  for h in pugixml.hpp pugiconfig.hpp; do ln -s "/usr/include/$h" "$inc/$h"; done
  standin pugixml 1.13 pugixml::pugixml
fi
standin utf8cpp 3.2 utf8cpp utf8::cpp

failed=0
# Each step's line ends with the seconds since the check began: where its minutes go.
fail() {
  echo "FAIL: $*"
  failed=1
}

# The torch program's sources (and their headers): listed in repros/cases/torch_program.cmake
# under fc_repro_torch_objects, the objects of forkcheck-repro-torch, with the torch cases'
# files, which repros/cases/CMakeLists.txt lists as FC_TORCH_CASE_SOURCES. Step 1 leaves them out
# (they need libtorch's headers); step 1b checks them.
torch_files() {
  { sed -n '/^add_library(fc_repro_torch_objects OBJECT/,/)/p' repros/cases/torch_program.cmake
    sed -n '/^set(FC_TORCH_CASE_SOURCES$/,/)/p' repros/cases/CMakeLists.txt; } |
    grep -o '[a-z_0-9/]*\.cc' | while read -r cc; do
      echo "repros/cases/$cc"
      if [ -e "repros/cases/${cc%.cc}.h" ]; then echo "repros/cases/${cc%.cc}.h"; fi
    done
}

# The files a Windows build compiles: the harness and its watch side, the reports, the start-method
# library, the repro core and the native cases; not the _posix/_linux/_mac ones, not the shim, not
# the torch program's, not the unit tests beside them.
windows_files() {
  local torch
  shopt -s nullglob  # a folder may hold no header of its own (repros/cases/ holds cases only)
  torch=" $(torch_files | tr '\n' ' ') "
  for f in include/forkcheck/*.h harness/*.cc harness/*/*.h harness/*/*.cc reports/*.h reports/*.cc \
           repros/launch/*.h repros/launch/*.cc repros/core/*.h repros/core/*.cc \
           repros/cases/*.h repros/cases/*.cc repros/cases/support/*.h repros/cases/support/*.cc; do
    case $f in
      *_posix.* | *_linux.* | *_mac.*) ;;
      repros/launch/boost_process_v1.h) ;;  # Boost.Process: POSIX files only
      # Unit tests beside their units (GoogleTest, built by CMake where they run).
      *_test.cc | *_test_workers.* | repros/launch/launch_no_init_main.cc) ;;
      *) [[ $torch == *" $f "* ]] || echo "$f" ;;
    esac
  done
}

# --- 1. -fsyntax-only, warnings as errors -----------------------------------------------------
gen="$work/generated/harness"
mkdir -p "$gen"
sed 's/@[A-Za-z_]*@/0/g' harness/version.h.in > "$gen/version.h"
sed 's/@[A-Za-z_]*@/0/g' harness/install_dirs.h.in > "$gen/install_dirs.h"
syntax() {  # FILE: a source, or a header compiled on its own
  local f=$1 args=(-std=c++17 -fsyntax-only -fopenmp -Werror "${warnings[@]}" -I"$root" -I"$root/include"
                   -I"$root/repros" -I"$work/generated" -isystem "$inc"
                   -isystem "$pugixml_src/src")
  case $f in
    *.h) "$cxx" "${args[@]}" -x c++ -include "$root/$f" - </dev/null ;;
    *) "$cxx" "${args[@]}" "$root/$f" ;;
  esac
}
# What step 1 compiles: _win32 files and every header, each on its own (a header must compile by
# itself). The portable sources are compiled in step 3, the reports' and the repro programs'
# with their warnings as failures there too.
syntax_files() {
  windows_files | while read -r f; do
    case $f in
      *_win32.* | *.h) echo "$f" ;;
    esac
  done
}
# check_each NAME CHECK FILE...: runs `CHECK FILE` for each file, $jobs at a time, each file's
# errors in a log of its own under $work/NAME; every file that fails is a FAIL with its errors.
check_each() {
  local name=$1 check=$2 dir="$work/$1" running=0 f
  shift 2
  rm -rf "$dir"
  mkdir -p "$dir"
  for f in "$@"; do
    ("$check" "$f" >"$dir/${f//\//_}.err" 2>&1 || echo "$f" >>"$dir/failed") &
    running=$((running + 1))
    if [ $running -ge "$jobs" ]; then
      wait -n || true
      running=$((running - 1))
    fi
  done
  wait
  if [ -s "$dir/failed" ]; then
    while read -r f; do
      fail "$name: $f"
      grep -E "error" "$dir/${f//\//_}.err" | head -20
    done < <(sort "$dir/failed")
  fi
}
mapfile -t to_check < <(syntax_files)
check_each syntax syntax "${to_check[@]}"
echo "1. syntax: ${#to_check[@]} files checked (_win32 files, headers) (at ${SECONDS} s)"

# --- 1b. the torch program's sources, against libtorch's headers -------------------------------
tinc="$work/torch-include"
rm -rf "$tinc"
syntax_torch() {  # FILE: a torch program source (from the root), or a generated one (absolute)
  local src=$1
  [[ $src == /* ]] || src=$root/$src
  "$cxx" -std=c++17 -fsyntax-only -fopenmp -Werror "${warnings[@]}" -DNDEBUG \
    -DC10_BUILD_MAIN_LIB -DCAFFE2_BUILD_MAIN_LIB -I"$root" -I"$root/include" -I"$root/repros" \
    -I"$work/generated" -isystem "$inc" -isystem "$tinc" \
    -isystem "$tinc/torch/csrc/api/include" "$src"
}
if [ -d /usr/include/torch/csrc/api/include ]; then
  mkdir -p "$tinc"
  for h in ATen c10 caffe2 torch gflags glog; do
    [ -e "/usr/include/$h" ] && ln -s "/usr/include/$h" "$tinc/$h"
  done
  mapfile -t torch_sources < <(torch_files | grep '\.cc$' | grep -vE '_(posix|linux|mac)\.cc$')
  # None found means the list in repros/cases/CMakeLists.txt moved: a check of nothing is a failure.
  [ ${#torch_sources[@]} -gt 0 ] || fail "1b: no torch program sources found in repros/cases/CMakeLists.txt"
  # In one translation unit, as the unity build compiles them: libtorch's headers are parsed once
  # rather than once per source (a minute in all).
  for f in "${torch_sources[@]}"; do echo "#include \"$root/$f\""; done >"$work/torch_sources.cc"
  check_each syntax-torch syntax_torch "$work/torch_sources.cc"
  echo "1b. syntax: ${#torch_sources[@]} torch program sources checked against libtorch's headers (at ${SECONDS} s)"
else
  echo "1b. not checked: no libtorch headers here (/usr/include/torch; libtorch-dev installs them)"
fi

# --- 2. no POSIX-only header that MSVC lacks ------------------------------------------------------
posix_only='unistd|dirent|fnmatch|pthread|poll|dlfcn|link|libgen|strings|termios|glob|spawn|sched'
posix_only+='|fcntl|arpa/inet|netinet/in|sys/(wait|socket|mman|select|time|resource|prctl|un|uio|ioctl'
posix_only+='|utsname|signalfd|syscall|epoll|stat|sysctl)'
hits=$(windows_files | xargs grep -nE "^#include <($posix_only)\.h>" || true)
if [ -n "$hits" ]; then
  fail "POSIX-only headers in files a Windows build compiles:"
  echo "$hits"
fi
echo "2. headers: $(windows_files | wc -l) files checked for POSIX-only headers (at ${SECONDS} s)"

# --- 3. the cross build ------------------------------------------------------------------------
# The harness's objects by name, the reports' library, forkcheck.exe and forkcheck-repro.exe with
# everything they link.
build="$work/build"
if ! cmake -S "$root" -B "$build" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$root/ci/mingw-w64.cmake" \
       -DFORKCHECK_PARTS=native -DFORKCHECK_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release \
       "${cmake_args[@]}" >"$work/configure.log" 2>&1; then
  cat "$work/configure.log"
  fail "cross configure"
  exit 1
fi
mapfile -t objects < <(ninja -C "$build" -t targets all |
                       sed -n 's/^\([^:]*CMakeFiles\/\(fc_harness\|fc_watch\|fc_launch\|forkcheck\)\.dir\/[^:]*\.obj\): .*/\1/p')
programs=(fc_reports fc_repro_core forkcheck-repro)
[ -n "$pugixml_missing" ] || programs+=(forkcheck)
if ! ninja -C "$build" -k 0 -j "$jobs" "${objects[@]}" "${programs[@]}" \
       >"$work/build.log" 2>&1; then
  grep -E "error|FAILED" "$work/build.log" | head -40
  fail "cross build (log: $work/build.log)"
fi
# Warnings in the files a Windows build compiles are errors but in the harness's shared files,
# where they are shown (their owners' business).
grep -E "warning:" "$work/build.log" | sort -u | sed 's/^/   /' || true
# (Headers come through the layers' include roots: build/layers/NAME/NAME/...)
if grep -E "warning:" "$work/build.log" | grep -qE "win32|/reports/|/repros/|/layers/(core|launch|cases|reports)/"; then
  fail "warnings in Windows files"
fi
repro="$build/bin/forkcheck-repro.exe"
linked=()
for exe in forkcheck.exe forkcheck-repro.exe; do
  [ -f "$build/bin/$exe" ] && linked+=("$exe")
done
echo "3. cross build: ${#objects[@]} objects of fc_harness, fc_watch, fc_launch and forkcheck," \
     "fc_reports, fc_repro_core; linked: ${linked[*]:-nothing} (at ${SECONDS} s)"

# --- 4. the smoke programs, linked -----------------------------------------------------------------
if [ $failed -eq 0 ]; then
  ar=x86_64-w64-mingw32-ar
  for lib in harness launch; do  # archives, so the link takes only the objects it needs
    rm -f "$work/libfc_$lib.a"
    mapfile -t members < <(printf '%s\n' "${objects[@]}" | grep "/fc_$lib\.dir/")
    (cd "$build" && "$ar" rcs "$work/libfc_$lib.a" "${members[@]}")
  done
  link=(-std=c++17 -O1 -static -Werror "${warnings[@]}" -I"$root" -I"$root/include" -I"$root/repros"
        -I"$work/generated" -isystem "$inc")
  if "$cxx" "${link[@]}" tests/win32/smoke_child.cc -o "$work/smoke_child.exe" &&
     "$cxx" "${link[@]}" tests/win32/supervisor_smoke.cc "$work/libfc_harness.a" \
            "$build/reports/libfc_reports.a" "$work/libfc_launch.a" -ldbghelp -o "$work/supervisor_smoke.exe" &&
     "$cxx" "${link[@]}" tests/win32/repro_smoke.cc "$work/libfc_harness.a" \
            "$build/reports/libfc_reports.a" "$work/libfc_launch.a" -ldbghelp -o "$work/repro_smoke.exe" &&
     "$cxx" "${link[@]}" tests/win32/shared_lock_smoke.cc repros/cases/support/shared_lock_win32.cc \
            repros/cases/support/shared_memory_win32.cc "$build/repros/core/libfc_repro_core.a" \
            "$work/libfc_launch.a" -o "$work/shared_lock_smoke.exe" &&
     "$cxx" "${link[@]}" tests/win32/record_queue_smoke.cc repros/cases/support/record_queue.cc \
            repros/cases/support/loopback_win32.cc "$work/libfc_launch.a" -lws2_32 \
            -o "$work/record_queue_smoke.exe"; then
    echo "4. link: supervisor_smoke.exe, smoke_child.exe, repro_smoke.exe, shared_lock_smoke.exe," \
         "record_queue_smoke.exe (at ${SECONDS} s)"
  else
    fail "linking the smoke programs"
  fi
fi

# --- 5. run under wine, when it is there ------------------------------------------------------------
wine=$(command -v wine64 || command -v wine || { [ -x /usr/lib/wine/wine64 ] && echo /usr/lib/wine/wine64; } || true)
if [ $failed -eq 0 ] && [ -n "$wine" ]; then
  # A prefix of our own, and its wineserver ended afterwards: nothing outlives the check.
  # forkcheck-repro.exe links mingw's runtime DLLs (libgomp above all: gomp-fork-hang checks that
  # the OpenMP runtime it claims is loaded): WINEPATH finds them where mingw keeps them.
  gcc_dlls=$(dirname "$("$cxx" -print-libgcc-file-name)")
  export WINEPREFIX="$work/wine" WINEDEBUG=-all
  export WINEPATH="$gcc_dlls;/usr/x86_64-w64-mingw32/lib"
  wineserver=$(command -v wineserver || echo /usr/lib/wine/wineserver)
  run_smoke() {  # NAME ARGS...: runs NAME.exe in $work, its output in NAME.log
    local name=$1
    shift
    if (cd "$work" && timeout 900 "$wine" "$name.exe" "$@") >"$work/$name.log" 2>&1; then
      sed 's/^/   /' "$work/$name.log"
      echo "5. $name under wine: passed"
    else
      sed 's/^/   /' "$work/$name.log"
      fail "$name under wine ($work/$name.log)"
    fi
  }
  run_smoke supervisor_smoke smoke_child.exe
  run_smoke repro_smoke "Z:${repro//\//\\}"  # wine's Z: drive is /
  run_smoke shared_lock_smoke
  run_smoke record_queue_smoke

  # --- 6. forkcheck.exe itself, as a Windows user runs it: `all`, `exec`, bad input -------------
  # (tests/win32/check_forkcheck_exe.py: what the reports say, not only exit statuses)
  if [ -n "$pugixml_missing" ]; then
    echo "6. not run: $pugixml_missing"
  elif python3 tests/win32/check_forkcheck_exe.py "$wine" "$build/bin" "$work/smoke_child.exe" \
       "$work" reports/report.schema.json >"$work/forkcheck_exe.log" 2>&1; then
    sed 's/^/   /' "$work/forkcheck_exe.log"
    echo "6. forkcheck.exe all, exec and bad input under wine: passed (at ${SECONDS} s)"
  else
    sed 's/^/   /' "$work/forkcheck_exe.log"
    fail "forkcheck.exe under wine ($work/forkcheck_exe.log)"
  fi
  "$wineserver" -k 2>/dev/null || true
elif [ $failed -eq 0 ]; then
  echo "5. run: wine is not installed: the smoke programs and forkcheck.exe were linked, not run"
fi

[ -z "$pugixml_missing" ] || fail "$pugixml_missing"
if [ $failed -ne 0 ]; then
  # Again at the end, where a log cut to its head and tail still shows them: every failed check
  # of the programs run under wine, with what was seen.
  grep -h -E '^ *FAIL' "$work"/*.log 2>/dev/null | sed 's/^ */   /' || true
  echo "check-win32-cross: FAILED"
  exit 1
fi
echo "check-win32-cross: ok"
