#!/usr/bin/env bash
# ctest install.*: what `cmake --install` gives works with no source or build tree, from any
# directory, and wherever the installed tree is moved.
#   check_install.sh tree BUILD WORK          install into WORK/prefix, move it to WORK/moved
#   check_install.sh all BUILD WORK           WORK/moved/bin/forkcheck all, run from an empty
#                                             directory: every part found under WORK/moved
#   check_install.sh consumer BUILD WORK SRC  examples/launch-consumer configured, built and run
#                                             against WORK/moved (find_package(forkcheck))
set -euo pipefail
mode=$1
build=$(cd "$2" && pwd)
work=$3
moved=$work/moved
fail() { echo "FAIL: $*" >&2; exit 1; }
# Nothing from the developer's environment may point forkcheck at the build tree.
unset FORKCHECK_REPRO_DIR FORKCHECK_WATCH_SHIM FORKCHECK_SCHEMA

case $mode in
tree)
  rm -rf "$work"
  mkdir -p "$work"
  cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
  mv "$work/prefix" "$moved"
  for f in bin/forkcheck libexec/forkcheck/forkcheck-repro libexec/forkcheck/forkcheck-repro-torch \
           lib/forkcheck/libforkcheck_watch.so share/forkcheck/report.schema.json \
           include/forkcheck/launch.h lib/cmake/forkcheck/forkcheckConfig.cmake \
           lib/cmake/forkcheck/forkcheckConfigVersion.cmake; do
    [ -e "$moved/$f" ] || fail "not installed: $f"
  done
  # Nothing installed names the build tree: no RPATH into it, no CMake file pointing at it.
  for f in "$moved"/bin/* "$moved"/libexec/forkcheck/* "$moved"/lib/forkcheck/*; do
    if readelf -d "$f" 2>/dev/null | grep -E 'R(UN)?PATH' | grep -qF "$build"; then
      fail "$f has an RPATH into the build tree: $(readelf -d "$f" | grep -E 'R(UN)?PATH')"
    fi
  done
  if grep -rlF "$build" "$moved/lib/cmake"; then fail "a CMake file names the build tree"; fi
  # The manual page, from the help: every command in it, no build path in its usage lines.
  if command -v help2man >/dev/null; then
    page=$moved/share/man/man1/forkcheck.1
    [ -f "$page" ] || fail "not installed: share/man/man1/forkcheck.1"
    # Every command the program lists (its table: harness/commands/command_table.cc), help aside.
    mapfile -t listed < <("$moved/bin/forkcheck" --help |
      awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1; next } on { exit }' |
      grep -vx help)
    [ "${#listed[@]}" -ge 11 ] || fail "forkcheck --help lists ${#listed[@]} commands: ${listed[*]}"
    for c in "${listed[@]}"; do
      grep -q "^\.SS $c\$" "$page" || fail "forkcheck.1 has no section for $c"
    done
    if grep -qF "$build" "$page"; then fail "forkcheck.1 names the build tree"; fi
  fi
  echo "installed into $work/prefix and moved to $moved"
  ;;
all)
  [ -x "$moved/bin/forkcheck" ] || fail "no installed tree at $moved (install.tree runs first)"
  elsewhere=$work/elsewhere
  rm -rf "$elsewhere" "$work/all-report"
  mkdir -p "$elsewhere"
  cd "$elsewhere"
  "$build/bin/forkcheck" list --json >"$work/build-list.json"
  "$moved/bin/forkcheck" list --json >"$work/installed-list.json"
  "$moved/bin/forkcheck" env --json >"$work/installed-env.json"
  rc=0
  "$moved/bin/forkcheck" all --out "$work/all-report" >"$work/all.log" 2>&1 || rc=$?
  [ "$rc" -eq 0 ] || { tail -20 "$work/all.log"; fail "installed forkcheck all exited $rc"; }
  "$moved/bin/forkcheck" watch --out "$work/watch-report" -- /bin/true >"$work/watch.log" 2>&1 ||
    { cat "$work/watch.log"; fail "installed forkcheck watch -- /bin/true failed"; }
  [ -z "$(ls -A "$elsewhere")" ] || fail "forkcheck wrote into its working directory: $(ls -A "$elsewhere")"
  python3 - "$work" "$moved" <<'PY'
import json, os, sys
work, moved = sys.argv[1], sys.argv[2]
load = lambda name: json.load(open(os.path.join(work, name)))
built, installed = load("build-list.json"), load("installed-list.json")
report = json.load(open(os.path.join(work, "all-report", "report.json")))
env = load("installed-env.json")["forkcheck"]
errors = []
expect = lambda ok, what: ok or errors.append(what)
# The installed catalog is the built one: every case, every variant, the same expectations (a
# repro program missing from the install turns its variants into skips).
plan = lambda listing: {(c["id"], v["name"]): (v["expected"], v.get("skip_reason", ""))
                        for c in listing["cases"] for v in c["variants"]}
b, i = plan(built), plan(installed)
expect(b.keys() == i.keys(), f"variants differ: {sorted(b.keys() ^ i.keys())}")
for k in sorted(b.keys() & i.keys()):
    expect(b[k][0] == i[k][0], f"{k}: built expects {b[k]}, installed {i[k]}")
expect(not installed["errors"], f"installed list errors: {installed['errors']}")
libexec = os.path.join(moved, "libexec", "forkcheck") + os.sep
for c in report["cases"]:
    expect(c["program"].startswith(libexec), f"{c['id']} ran {c['program']}, not under {libexec}")
expect(len(report["cases"]) == len(built["cases"]), "all ran a different number of cases")
expect(report["summary"]["ok"] is True, f"all's summary: {report['summary']}")
for part, where in (("repro_programs", "libexec/forkcheck"),
                    ("watch_shim", "lib/forkcheck/libforkcheck_watch.so"),
                    ("report_schema", "share/forkcheck/report.schema.json")):
    found = env[part].get("found")
    expect(found == os.path.join(moved, where), f"env: {part} found at {found}, not {moved}/{where}")
expect(env["executable"] == os.path.join(moved, "bin", "forkcheck"), f"env: executable {env['executable']}")
for e in errors:
    print("FAIL:", e)
sys.exit(1 if errors else 0)
PY
  echo "installed forkcheck all: $(grep -c . "$work/all.log") lines, summary ok; every part found under $moved"
  ;;
consumer)
  source_dir=$4
  [ -f "$moved/lib/cmake/forkcheck/forkcheckConfig.cmake" ] || fail "no installed tree at $moved"
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  rm -rf "$work/consumer" "$work/too-new"
  # C++11 asked for: forkcheck::launch must raise it to the C++17 its header needs by itself.
  cmake -S "$source_dir/examples/launch-consumer" -B "$work/consumer" "${generator[@]}" \
    -DCMAKE_PREFIX_PATH="$moved" -DCMAKE_CXX_STANDARD=11 >"$work/consumer-configure.log" 2>&1 ||
    { cat "$work/consumer-configure.log"; fail "the example does not configure against $moved"; }
  cmake --build "$work/consumer" >"$work/consumer-build.log" 2>&1 ||
    { cat "$work/consumer-build.log"; fail "the example does not build"; }
  out=$("$work/consumer/launch-consumer") || { echo "$out"; fail "the example failed"; }
  echo "$out"
  for method in fork spawn forkserver; do
    grep -q "^$method  *ok: square 49" <<<"$out" || fail "no ok line for $method"
  done
  # The default method follows FORKCHECK_START_METHOD, as forkcheck matrix sets it.
  out=$(FORKCHECK_START_METHOD=spawn "$work/consumer/launch-consumer") ||
    { echo "$out"; fail "the example failed under FORKCHECK_START_METHOD=spawn"; }
  grep -q "^default  *spawn: ok: square 49" <<<"$out" || { echo "$out"; fail "the default was not spawn"; }
  # forkcheck matrix sets it for a program built on forkcheck::launch: each method's run says so.
  if [ -x "$moved/bin/forkcheck" ]; then
    rm -rf "$work/matrix"
    "$moved/bin/forkcheck" matrix --quiet --out "$work/matrix" -- "$work/consumer/launch-consumer" \
      >"$work/matrix.log" 2>&1 || { cat "$work/matrix.log"; fail "forkcheck matrix failed on the example"; }
    for method in fork spawn forkserver; do
      grep -q "default  *$method: ok: square 49" "$work/matrix/report.json" ||
        fail "forkcheck matrix: no default $method line in the $method run"
    done
  fi
  # The version file: a newer forkcheck than the one installed is refused.
  mkdir -p "$work/too-new"
  printf 'cmake_minimum_required(VERSION 3.18)\nproject(t LANGUAGES NONE)\nfind_package(forkcheck 99 CONFIG REQUIRED)\n' \
    >"$work/too-new/CMakeLists.txt"
  if cmake -S "$work/too-new" -B "$work/too-new/build" -DCMAKE_PREFIX_PATH="$moved" \
       >"$work/too-new.log" 2>&1; then
    fail "find_package(forkcheck 99) was accepted by version $(grep -o 'PACKAGE_VERSION "[^"]*"' \
      "$moved/lib/cmake/forkcheck/forkcheckConfigVersion.cmake" | head -1)"
  fi
  grep -q "version" "$work/too-new.log" || fail "find_package(forkcheck 99) failed without naming the version"
  ;;
*)
  fail "unknown mode $mode"
  ;;
esac
