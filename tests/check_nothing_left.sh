#!/usr/bin/env bash
# Fails when any process started from the build tree (forkcheck, the repro programs, the test
# programs) is still alive after the suite: a supervised tree must leave nothing behind.
set -u
build=$(cd "$1" && pwd -P)
left=0
for d in /proc/[0-9]*; do
  pid=${d#/proc/}
  [ "$pid" = "$$" ] && continue
  exe=$(readlink "$d/exe" 2>/dev/null) || continue
  state=$(awk '{print $3}' "$d/stat" 2>/dev/null)
  case "$exe" in
    "$build"/*)
      [ "$state" = Z ] && continue
      echo "still running: pid $pid $exe ($(tr '\0' ' ' < "$d/cmdline" 2>/dev/null))"
      left=1 ;;
  esac
done
[ $left = 0 ] && echo "nothing left running from $build"
exit $left
