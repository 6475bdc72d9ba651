// Joining a set of workers the way the sources' programs do (start N, join them all), turned into
// one outcome with per-worker evidence. Shared by every case that starts workers.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <forkcheck/launch.h>
#include "core/case_registry.h"

namespace fc {

struct PoolResult {
  Outcome outcome = Outcome::kOk;
  std::string message;                               // the first failure, or a summary
  nlohmann::json workers = nlohmann::json::array();  // one entry per worker, in start order
};

// Joins every worker within `deadline` (the whole pool). A worker killed by a signal makes the
// outcome `crash` (the message names the first to die: index, pid, start method, signal, when);
// one that threw or exited non-zero makes it `error` with that worker's message. Workers still
// running at the deadline are judged by what their trees (each worker and every process it
// started) were doing, by launch::TreeActivity's rule: `hang` when every one was blocked through
// the stall window, `timeout` when any was still working; they are then terminated with `grace`.
// A crash or error outranks them (see join_pool's body for why), and the message then counts them
// too: how many were blocked, how many still working, each with the CPU its tree used in the
// window. Nothing is left running.
// join_pool blocks in one wait over every worker (launch::join_any) until one ends, it is time to
// look at the trees (every TreeActivity::kLookEvery) or the deadline comes: each end is seen
// within milliseconds of happening, and the parent uses next to no CPU while it waits. Each
// entry of `workers`: index, pid, start_method, status (ok, error, crash, hang, timeout),
// seconds (from its start to its end), ended_after_s (its end, in seconds after the pool's first
// worker was started), and as they apply: result, error, signal, signal_name, core_dumped,
// exit_code, forced_kill; a worker ended at the deadline (hang, timeout) has `tree`, its tree at
// the last look, in the words the harness uses for a variant's: state (blocked, working),
// still_s, window_s, cpu_s_in_window, cpu_s, processes, threads, longest_still_s, looks.
PoolResult join_pool(std::vector<launch::Worker>& workers, std::chrono::milliseconds deadline,
                     std::chrono::milliseconds grace = std::chrono::milliseconds(1000));

// Starts `n` copies of `worker`, payload[i] going to the i-th, with the variant's start method.
std::vector<launch::Worker> start_pool(const VariantSpec& variant, const std::string& worker,
                                       const std::vector<nlohmann::json>& payloads);

// The variant's start method (throws std::invalid_argument for one this build does not know).
launch::StartMethod start_method_of(const VariantSpec& variant);

// How a worker ended, in words: "finished", its error, or the signal that killed it.
std::string describe_end(const launch::WorkerOutcome& o);

// One worker's end, as every report shows it: index, pid, start_method, status, seconds,
// ended_after_s (seconds after the pool started), then result or error, signal, signal_name,
// core_dumped, exit_code, forced_kill where they apply.
nlohmann::json worker_end_json(size_t index, const launch::Worker& w,
                               const launch::WorkerOutcome& o, double ended_after_s);

// Turns a pool's result into the case's, keeping the per-worker evidence in details.workers.
CaseResult to_case_result(PoolResult pool, nlohmann::json details = nlohmann::json::object());

}  // namespace fc
