#!/usr/bin/env bash
# ctest ci.action_install_mode: action.yml's choice of release or source (ci/action-install-mode.sh)
# for each kind of job: a release only on Linux and macOS, with a version tag, for a command
# about the user's own program; an impossible choice refused with exit status 2.
set -euo pipefail
script=$(dirname "$0")/../../ci/action-install-mode.sh
fail=0
machine=x86_64
glibc="glibc 2.36"
check() {  # INSTALL VERSION ACTION_REF COMMAND OS -> EXPECTED ("mode tag", or "refused")
  local got
  if got=$(FORKCHECK_INSTALL=$1 FORKCHECK_VERSION=$2 FORKCHECK_ACTION_REF=$3 \
    FORKCHECK_COMMAND=$4 RUNNER_OS=$5 FORKCHECK_MACHINE=$machine FORKCHECK_GLIBC=$glibc \
    bash "$script" 2>/dev/null); then
    got=$(sed -n 's/^mode=//p' <<<"$got")" "$(sed -n 's/^tag=//p' <<<"$got")
  else
    got="refused ($?)"
  fi
  if [ "$got" != "$6" ]; then
    echo "FAIL: install=$1 version=$2 ref=$3 command='$4' os=$5 $machine $glibc: got '$got'," \
      "expected '$6'"
    fail=1
  fi
}
check auto "" v0.2.0 "exec -- pytest" Linux "release v0.2.0"
check auto "" v0.2.0 "matrix -- python3 t.py" Linux "release v0.2.0"
check auto "" v0.2.0 "all" Linux "source v0.2.0"          # the torch cases need a build
check auto "" main "exec -- pytest" Linux "source "         # no release to install
check auto v1.0.0 main "exec -- pytest" Linux "release v1.0.0"
check auto "" v0.2.0 "exec -- pytest" macOS "release v0.2.0"
check auto "" v0.2.0 "all" macOS "source v0.2.0"
check auto "" v0.2.0 "exec -- pytest" Windows "source v0.2.0" # no archive for Windows
check source "" v0.2.0 "exec -- pytest" Linux "source v0.2.0"
check release "" main "exec -- pytest" Linux "refused (2)"
check release v1.0.0 "" "exec -- x" Windows "refused (2)"
check bogus "" v1.0.0 "exec -- x" Linux "refused (2)"
check auto "" v1 "exec -- pytest" Linux "source "           # a moving tag names no archive
check auto "" v1.2 "exec -- pytest" Linux "source "
machine=ppc64le
check auto "" v0.2.0 "exec -- pytest" Linux "source v0.2.0"  # no archive for it
check release "" v0.2.0 "exec -- pytest" Linux "refused (2)"
machine=aarch64
check auto "" v0.2.0 "exec -- pytest" Linux "release v0.2.0"
glibc="glibc 2.27"                                           # ubuntu:18.04
check auto "" v0.2.0 "exec -- pytest" Linux "source v0.2.0"
glibc=""                                                     # musl: no getconf answer
check auto "" v0.2.0 "exec -- pytest" Linux "source v0.2.0"
machine=arm64                                                # Apple silicon
check auto "" v0.2.0 "exec -- pytest" macOS "release v0.2.0"
check release "" v0.2.0 "watch -- make" macOS "release v0.2.0"
machine=ppc64le
check release "" v0.2.0 "exec -- pytest" macOS "refused (2)"
[ "$fail" = 0 ] && echo "PASS: 22 choices"
exit "$fail"
