// What the shim saw, read back: its event files (FORKCHECK_WATCH_DIR/<pid>.jsonl, one JSON line
// per event) paired into one record per fork.
//   fork         in the parent's file: what it held when it forked (threads and who started
//                them, runtimes loaded, CUDA, command line, backtrace) and the child's pid
//   exec         in the child's file, before its exec; exec_failed after one that returned
//   end          in the child's file: it called exit/_exit/_Exit or returned from main
//   reaped       in the waiting process's file: a child's wait status
// A child's events name the fork that made it (the parent image's id and the fork's sequence
// number), so pid reuse cannot mix two children up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

namespace fc::harness {

struct WatchEvents {
  std::vector<nlohmann::json> events;
  size_t files = 0;
  // Not JSON objects (a line torn by a process killed mid-write), or with a field of another type
  // than the shim writes (the files lie in a folder the watched program can write to): skipped.
  size_t bad_lines = 0;
};

WatchEvents read_watch_events(const std::filesystem::path& dir);

// One record per fork, in the order they happened:
//   index (1, 2, ...: "fork 1" in every format), pid, command, child, seq, at_s (seconds after
//   `start_ns`, CLOCK_MONOTONIC, when given), thread {tid, name, main} (the forking thread),
//   threads (how many were alive), thread_list [{tid, name, by}] (by: the library that started it,
//   when known), runtimes, cuda {loaded, initialised, devices}, backtrace, exec (the child called
//   exec), exec_path, exec_errno (when the exec returned), child_end {how: exited|killed|unknown,
//   code | signal + signal_name + core, seen_by}.
// Hazards are added by fork_hazards.h.
nlohmann::json pair_fork_events(const std::vector<nlohmann::json>& events, uint64_t start_ns = 0);

}  // namespace fc::harness
