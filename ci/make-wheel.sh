#!/usr/bin/env bash
# forkcheck's wheel (ci/wheel/setup.py) from the portable build's staging folder, with the pip,
# setuptools and wheel this machine has (Debian: python3-pip, python3-setuptools, python3-wheel),
# no build isolation and no network: DIST/forkcheck-VERSION-py3-none-PLATFORM.whl, PLATFORM
# what its programs need of the system (ci/wheel-platform.sh): manylinux_2_X_ARCH, X the newest
# glibc version they need (2.28 from the release workflow's manylinux_2_28 container; this
# machine's own elsewhere), or on macOS macosx_X_0_ARCH, X the newest minimum macOS of its files.
#   ci/make-wheel.sh STAGE DIST
# STAGE: the one folder under BUILD/stage that ci/make-portable.sh installed into. Prints the
# wheel's path last.
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/.." && pwd)
stage=$(cd "$1" && pwd)
dist=$2
python=${FORKCHECK_WHEEL_PYTHON:-python3}
version=$("$stage/bin/forkcheck" --version)
platform=$(bash "$source_dir/ci/wheel-platform.sh" "$stage")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$source_dir/ci/wheel/setup.py" "$source_dir/ci/wheel/pyproject.toml" "$work/"
mkdir -p "$dist"
FORKCHECK_WHEEL_STAGE=$stage FORKCHECK_WHEEL_PLATFORM=$platform FORKCHECK_WHEEL_VERSION=$version \
  "$python" -m pip wheel --no-build-isolation --no-deps --no-index --disable-pip-version-check \
  -w "$dist" "$work" >&2
echo "$dist/forkcheck-$version-py3-none-$platform.whl"
