#!/usr/bin/env bash
# action.yml's choice of how forkcheck gets onto the runner (its `install` input): prints
# "mode=release|source" and "tag=vX.Y.Z" (empty when none) as lines for $GITHUB_OUTPUT, and says
# the choice on stderr. Reads FORKCHECK_INSTALL (auto, release, source), FORKCHECK_VERSION,
# FORKCHECK_ACTION_REF (the action's own ref), FORKCHECK_COMMAND and RUNNER_OS; the machine
# (uname -m) and on Linux its glibc (getconf GNU_LIBC_VERSION), which FORKCHECK_MACHINE and
# FORKCHECK_GLIBC stand for in tests. Exit 2, saying why, for a choice that cannot be had. Tested
# by tests/ci/action_install_mode_test.sh.
set -euo pipefail
tag=${FORKCHECK_VERSION:-${FORKCHECK_ACTION_REF:-}}
# A release's own tag, vX.Y.Z: a moving tag (v1) or a branch names no archive.
[[ $tag =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || tag=
# Where a release has an archive: Linux on x86_64 or aarch64, with glibc 2.28 or later (a
# container of an older distribution, or musl, builds from source instead); macOS on arm64 or
# x86_64 (the archive needs the macOS its release runner had: action.yml's install step runs it
# once, and under auto falls back to a build where it does not run).
archive_runs_here() {
  local machine glibc minor
  machine=${FORKCHECK_MACHINE:-$(uname -m)}
  if [ "${RUNNER_OS:-}" = macOS ]; then
    case $machine in arm64 | x86_64) return 0 ;; *) return 1 ;; esac
  fi
  [ "${RUNNER_OS:-}" = Linux ] || return 1
  case $machine in x86_64 | aarch64) ;; *) return 1 ;; esac
  glibc=${FORKCHECK_GLIBC-$(getconf GNU_LIBC_VERSION 2>/dev/null || true)}
  [[ $glibc =~ ^glibc\ 2\.([0-9]+) ]] || return 1
  minor=${BASH_REMATCH[1]}
  [ "$minor" -ge 28 ]
}
command=${FORKCHECK_COMMAND:-all}
sub=${command%% *}
mode=${FORKCHECK_INSTALL:-auto}
if [ "$mode" = auto ]; then
  mode=source
  # Commands about the user's own program. all, run and list want the torch cases too: a build
  # from source always has them, while the archive builds them against the job's own torch, which
  # a job may not have (install: release asks for that).
  case $sub in
    exec | watch | matrix | attach | diff | report)
      if [ -n "$tag" ] && archive_runs_here; then mode=release; fi ;;
  esac
fi
case $mode in
  release)
    if [ -z "$tag" ] || ! archive_runs_here; then
      echo "install: release needs a release's tag (version: v0.2.0) and Linux on x86_64 or" \
        "aarch64 with glibc 2.28 or later, or macOS on arm64 or x86_64" >&2
      exit 2
    fi ;;
  source) ;;
  *) echo "install: $mode is not auto, release or source" >&2; exit 2 ;;
esac
echo "install: $mode${tag:+ ($tag)}" >&2
echo "mode=$mode"
echo "tag=$tag"
