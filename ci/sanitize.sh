#!/usr/bin/env bash
# The torch-free harness and the start-method library, built with ASan+UBSan into build-asan/,
# and their test suites run there: the supervisor's tests and the watchdog's rules, the adversarial suite (hostile
# children, and forkcheck itself under a closed stdout, a killed guardian, a reused pid), the
# process trees, the start methods. Any sanitizer report fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${FORKCHECK_ASAN_BUILD_DIR:-build-asan}
jobs=$(nproc 2>/dev/null || echo 2)
generator=()
command -v ninja >/dev/null && [ ! -f "$build/Makefile" ] && generator=(-G Ninja)
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Debug -DFORKCHECK_SANITIZE=ON >/dev/null
cmake --build "$build" -j "$jobs" --target harness_test supervise_test stacks_test launch_test \
  fault_child adversarial_test tree_activity_test
# handle_segv=0: the tests make children segfault on purpose and must see the real signal.
export ASAN_OPTIONS=handle_segv=0:detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$build/bin/harness_test" --gtest_brief=1
"$build/bin/supervise_test" --gtest_brief=1
"$build/bin/stacks_test" --gtest_brief=1
"$build/bin/launch_test" --gtest_brief=1
"$build/bin/adversarial_test" --gtest_brief=1
"$build/bin/tree_activity_test" --gtest_brief=1
echo "sanitizers: harness_test, supervise_test, stacks_test, launch_test, adversarial_test and tree_activity_test ran clean under ASan+UBSan"
