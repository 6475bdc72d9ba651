// `--bench`: how long a worker takes to start with each start method, measured from the parent
// asking for it to the worker running its first line, and what each worker costs in memory.
// The parent has libtorch loaded (the torch program) but has not started any thread, as a
// program that is about to start its workers would.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fc::bench {

// Raw samples (milliseconds, KiB) for every method and worker kind. `native_program`: a repro
// program that does not link libtorch, spawned for the worker that needs no torch.
nlohmann::json run(int repeat, const std::string& native_program);

// CLOCK_MONOTONIC in nanoseconds: the same clock in every process of the machine.
long long monotonic_ns();

// This process's resident and proportional set sizes (KiB), from /proc/self/smaps_rollup.
nlohmann::json memory_kib();

}  // namespace fc::bench
