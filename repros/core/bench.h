// `--bench`: how long a worker takes to start with each start method, measured from the parent
// asking for it to the worker running its first line, and what each worker costs in memory.
// The parent has libtorch loaded (the torch program) but has not started any thread, as a
// program that is about to start its workers would.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fc::bench {

// Raw samples (milliseconds, KiB) for every method this platform has and every worker kind;
// "unavailable" names the methods it lacks, and why (Windows: fork, forkserver).
// `native_program`: a repro program that does not link libtorch, spawned for the worker that
// needs no torch.
nlohmann::json run(int repeat, const std::string& native_program);

// The steady clock in nanoseconds (CLOCK_MONOTONIC on Linux): the same clock in every process of
// the machine.
long long monotonic_ns();

// This process's resident and proportional set sizes (KiB): {"rss_kib", "pss_kib"}, each where
// the OS says it (Linux: /proc/self/smaps_rollup, both; macOS: task_info, resident size alone;
// Windows: the working set alone). bench_memory_linux.cc, _mac.cc, _win32.cc.
nlohmann::json memory_kib();

}  // namespace fc::bench
