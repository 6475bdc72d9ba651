#!/usr/bin/env bash
# Every C and C++ file of the project in its own style (.clang-format): clang-format --dry-run
# -Werror over the files git tracks, or over every *.c/*.cc/*.h outside build folders when this
# is not a git checkout. Exit status 77 when clang-format is not installed
# (ci/install-deps-debian.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null; then
  echo "SKIP: clang-format is not installed"
  exit 77
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.c' '*.cc' '*.h')
else
  mapfile -t files < <(find harness reports repros tests examples ci -name '*.c' -o -name '*.cc' \
                         -o -name '*.h' | sort)
fi
clang-format --dry-run -Werror "${files[@]}"
echo "clang-format ($(clang-format --version | grep -o 'version [0-9.]*')): ${#files[@]} files clean"
