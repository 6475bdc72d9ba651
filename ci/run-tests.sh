#!/usr/bin/env bash
# Quick start, second command: install what is missing, build, run the whole test suite (the
# torch-free parts again under ASan+UBSan among them: the sanitize.* tests, ci/sanitize.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps-debian.sh
bash ci/build.sh -DFORKCHECK_BUILD_TESTS=ON
build=${FORKCHECK_BUILD_DIR:-build}
# package.deb installs the two .debs it built with dpkg, runs /usr/bin/forkcheck all and removes
# them again, where it may: as root, with no forkcheck package installed already.
if [ "$(id -u)" -eq 0 ]; then export FORKCHECK_TEST_DEB_INSTALL=${FORKCHECK_TEST_DEB_INSTALL:-1}; fi
# Two tests more than CPUs: most of the suite waits (for a deadline, a stall, a child's end), and
# every test waits for its events rather than for a time, so a busy machine slows it, no more.
cpus=$(nproc 2>/dev/null || echo 2)
ctest --test-dir "$build" --output-on-failure -j "$((cpus + 2))"
