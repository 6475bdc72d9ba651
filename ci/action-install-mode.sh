#!/usr/bin/env bash
# action.yml's choice of how forkcheck gets onto the runner (its `install` input): prints
# "mode=release|source" and "tag=vX.Y.Z" (empty when none) as lines for $GITHUB_OUTPUT, and says
# the choice on stderr. Reads FORKCHECK_INSTALL (auto, release, source), FORKCHECK_VERSION,
# FORKCHECK_ACTION_REF (the action's own ref), FORKCHECK_COMMAND and RUNNER_OS. Exit 2, saying
# why, for a choice that cannot be had. Tested by tests/ci/action_install_mode_test.sh.
set -euo pipefail
tag=${FORKCHECK_VERSION:-${FORKCHECK_ACTION_REF:-}}
case $tag in v[0-9]*) ;; *) tag= ;; esac
command=${FORKCHECK_COMMAND:-all}
sub=${command%% *}
mode=${FORKCHECK_INSTALL:-auto}
if [ "$mode" = auto ]; then
  mode=source
  # The archive holds no torch case: commands about the user's own program only.
  case $sub in
    exec | watch | matrix | attach | diff | report)
      if [ "${RUNNER_OS:-}" = Linux ] && [ -n "$tag" ]; then mode=release; fi ;;
  esac
fi
case $mode in
  release)
    if [ "${RUNNER_OS:-}" != Linux ] || [ -z "$tag" ]; then
      echo "install: release needs a Linux runner and a version tag (version: v0.2.0)" >&2
      exit 2
    fi ;;
  source) ;;
  *) echo "install: $mode is not auto, release or source" >&2; exit 2 ;;
esac
echo "install: $mode${tag:+ ($tag)}" >&2
echo "mode=$mode"
echo "tag=$tag"
