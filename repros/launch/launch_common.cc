// Names of start methods and statuses, and the thread count the forkserver checks.
#include <dirent.h>

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

int thread_count() {
  DIR* dir = ::opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  int n = 0;
  while (const struct dirent* e = ::readdir(dir)) {
    if (e->d_name[0] != '.') ++n;  // one entry per thread, plus "." and ".."
  }
  ::closedir(dir);
  return n > 0 ? n : -1;
}

}  // namespace fc::launch
