// What a supervised child came to, in forkcheck's vocabulary. When forkcheck called time (the
// deadline, or a step stalled with the tree blocked) and then signalled the child, the outcome is
// what the tree was doing then: `hang` (blocked) or `timeout` (still working). A child that ended
// by itself before forkcheck signalled it gets the outcome of its own end, whenever that end was
// noticed: a signal it did not get from us is a crash, a line on its channel that is not a
// forkcheck message a protocol-error, and the case's result is believed only when the process
// ended the way its result says.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/outcome.h"
#include "harness/supervise/supervisor.h"

namespace fc::harness {

struct Classified {
  Outcome outcome = Outcome::kError;
  std::string message;
  nlohmann::json details = nlohmann::json::object();
  bool harness_error = false;  // the harness or the case program failed, not the thing it tests
  // The run log's watchdog record (watchdog_record.h), built once here: the message is worded
  // from it, and the run log keeps it as it is.
  nlohmann::json watchdog;
};

// `expect_result`: the child is a repro program that must send a result on the channel.
Classified classify(const ChildResult& r, bool expect_result);

// Time was called on it (deadline or stall), but it ended by itself before forkcheck signalled it.
bool exited_by_itself(const ChildResult& r);

// Whether the watchdog called time on it: its deadline, a stalled step, or a stall longer than
// LaunchSpec::hang_after_s.
bool time_was_called(const ChildResult& r);

// Time was called and the tree was hung then (blocked, a process stuck, a step overdue): the
// outcome `hang`, and what --kill-on-hang ends an attached process for.
bool called_a_hang(const ChildResult& r);

}  // namespace fc::harness
