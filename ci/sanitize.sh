#!/usr/bin/env bash
# The torch-free harness and the start-method library, built with ASan+UBSan into build-asan/ (or
# $FORKCHECK_ASAN_BUILD_DIR), and their test suites run there: the supervisor's tests and the
# watchdog's rules, the adversarial suite (hostile children, and forkcheck itself under a closed
# stdout, a killed guardian, a reused pid), the process trees, the start methods. Any sanitizer
# report fails the run.
#   ci/sanitize.sh              build, then run every suite
#   ci/sanitize.sh --build      build only (ctest's sanitize.build)
#   ci/sanitize.sh --run NAME   run one suite of an earlier build (ctest's sanitize.NAME)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${FORKCHECK_ASAN_BUILD_DIR:-build-asan}
suites=(harness_test supervise_test stacks_test launch_test adversarial_test tree_activity_test)
mode=${1:-all}
case $mode in
  all | --build | --run) ;;
  *) echo "sanitize: unknown option $mode (--build, --run SUITE or none)" >&2; exit 2 ;;
esac

if [ "$mode" = all ] || [ "$mode" = --build ]; then
  jobs=$(nproc 2>/dev/null || echo 2)
  generator=()
  command -v ninja >/dev/null && [ ! -f "$build/Makefile" ] && generator=(-G Ninja)
  cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Debug -DFORKCHECK_SANITIZE=ON >/dev/null
  cmake --build "$build" -j "$jobs" --target "${suites[@]}" fault_child
  [ "$mode" = all ] || exit 0
fi

# handle_segv=0: the tests make children segfault on purpose and must see the real signal.
export ASAN_OPTIONS=handle_segv=0:detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if [ "$mode" = --run ]; then
  case " ${suites[*]} " in
    *" ${2:-} "*) exec "$build/bin/$2" --gtest_brief=1 ;;
    *) echo "sanitize: --run takes one of: ${suites[*]}" >&2; exit 2 ;;
  esac
fi
for suite in "${suites[@]}"; do "$build/bin/$suite" --gtest_brief=1; done
echo "sanitizers: ${suites[*]} ran clean under ASan+UBSan"
