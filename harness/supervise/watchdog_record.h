// What the watchdog saw and did to a child, as the run log records it: facts only (times, CPU,
// states, what was sent, who was left). reports/watchdog_text.h phrases them, for the run log's
// message and every report alike.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "harness/supervise/supervisor.h"

namespace fc::harness {

// A process of the tree that can never go on by itself (its pid, threads, how long, its wait).
nlohmann::json process_stall_record(const ProcessStall& p);
// A thread asleep in a wait that ends by itself: pid, tid, process, wait, since_s, ends_in_s (-1:
// not known), ends_exact.
nlohmann::json tree_sleep_record(const TreeSleep& s);

// The variant's "watchdog" block: the deadline and whether it passed, why time was called
// (called_for: step, stall, stuck, start-failures, deadline), the tree when it was, what was sent,
// what was left and killed, what the watching measured.
nlohmann::json watchdog_record(const ChildResult& r);

// How soon after forkcheck signalled a process to look at it (asked it for its stacks, attached
// a debugger) its death by a signal may be forkcheck's doing, and is not said to be its own.
constexpr double kDeathAfterLookS = 2.0;

// The child died of a signal that was not an ending of forkcheck's, within kDeathAfterLookS after
// one of forkcheck's look signals to it (the first such): {pid, what, after_s, how}; nullopt
// otherwise.
std::optional<nlohmann::json> died_after_look(const ChildResult& r);

// The variant's "hang" block when a step stalled (which pid, which step, within how long), else
// null.
nlohmann::json step_hang_record(const ChildResult& r);

}  // namespace fc::harness
