// What a supervised child came to, in forkcheck's vocabulary. The harness's own observations
// (a signal, a hung step, the deadline) come first; the case's result is believed only when the
// process ended the way its result says.
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
};

// `expect_result`: the child is a repro program that must send a result on the channel.
Classified classify(const ChildResult& r, bool expect_result);

}  // namespace fc::harness
