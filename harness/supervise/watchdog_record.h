// What the watchdog saw and did to a child, as the run log records it: facts only (times, CPU,
// states, what was sent, who was left). reports/watchdog_text.h phrases them, for the run log's
// message and every report alike.
#pragma once

#include <nlohmann/json.hpp>

#include "harness/supervise/supervisor.h"

namespace fc::harness {

// A process of the tree that can never go on by itself (its pid, threads, how long, its wait).
nlohmann::json process_stall_record(const ProcessStall& p);

// The variant's "watchdog" block: the deadline and whether it passed, why time was called
// (called_for: step, stall, stuck, start-failures, deadline), the tree when it was, what was sent,
// what was left and killed, what the watching measured.
nlohmann::json watchdog_record(const ChildResult& r);

// The variant's "hang" block when a step stalled (which pid, which step, within how long), else
// null.
nlohmann::json step_hang_record(const ChildResult& r);

}  // namespace fc::harness
