// Names of start methods and statuses.
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include <forkcheck/launch.h>

namespace fc::launch {

const char* to_string(StartMethod m) {
  switch (m) {
    case StartMethod::kFork:
      return "fork";
    case StartMethod::kSpawn:
      return "spawn";
    case StartMethod::kForkserver:
      return "forkserver";
  }
  return "?";
}

std::optional<StartMethod> parse_start_method(std::string_view s) {
  for (StartMethod m : {StartMethod::kFork, StartMethod::kSpawn, StartMethod::kForkserver}) {
    if (s == to_string(m)) return m;
  }
  return std::nullopt;
}

StartMethod default_start_method() {
  const char* asked = std::getenv("FORKCHECK_START_METHOD");
  if (asked != nullptr && *asked != '\0') {
    const auto m = parse_start_method(asked);
    if (!m)
      throw std::invalid_argument(std::string("FORKCHECK_START_METHOD=") + asked +
                                  ": not fork, spawn or forkserver");
    if (const char* why = unavailable_reason(*m))
      throw std::invalid_argument(std::string("FORKCHECK_START_METHOD=") + asked + ": " + why);
    return *m;
  }
#if defined(__linux__)
  return StartMethod::kForkserver;
#else
  return StartMethod::kSpawn;
#endif
}

Launcher::Launcher(StartMethod method) : method_(method) {
  const char* force = std::getenv("FORKCHECK_FORCE_START_METHOD");
  const char* asked = std::getenv("FORKCHECK_START_METHOD");
  if (force != nullptr && std::strcmp(force, "1") == 0 && asked != nullptr && *asked != '\0')
    method_ = default_start_method();
}

const char* to_string(WorkerOutcome::Status s) {
  switch (s) {
    case WorkerOutcome::Status::kOk:
      return "ok";
    case WorkerOutcome::Status::kError:
      return "error";
    case WorkerOutcome::Status::kCrash:
      return "crash";
  }
  return "?";
}

}  // namespace fc::launch
