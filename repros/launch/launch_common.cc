// Names of start methods and statuses.
#include <cstring>

#include "launch/launch.h"

namespace fc::launch {

const char* to_string(StartMethod m) {
  switch (m) {
    case StartMethod::kFork: return "fork";
    case StartMethod::kSpawn: return "spawn";
    case StartMethod::kForkserver: return "forkserver";
  }
  return "?";
}

std::optional<StartMethod> parse_start_method(std::string_view s) {
  for (StartMethod m : {StartMethod::kFork, StartMethod::kSpawn, StartMethod::kForkserver}) {
    if (s == to_string(m)) return m;
  }
  return std::nullopt;
}

const char* to_string(WorkerOutcome::Status s) {
  switch (s) {
    case WorkerOutcome::Status::kOk: return "ok";
    case WorkerOutcome::Status::kError: return "error";
    case WorkerOutcome::Status::kCrash: return "crash";
  }
  return "?";
}

}  // namespace fc::launch
