// The workers launch_test starts, registered by name at static-initialisation time.
#include "launch_test_workers.h"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include <forkcheck/launch.h>

namespace fc::launch::test_workers {

int g_set_in_main = 0;

std::string big_result_text() {
  std::string s;
  s.reserve(kBigResultBytes);
  for (std::size_t i = 0; s.size() < kBigResultBytes; ++i) s += static_cast<char>('a' + i % 26);
  return s;
}

namespace {

// Returns the payload and who ran it.
FORKCHECK_WORKER(echo) {
  return {{"payload", payload}, {"pid", ::getpid()}, {"ppid", ::getppid()}};
}

FORKCHECK_WORKER(throws) { throw std::runtime_error("boom"); }

FORKCHECK_WORKER(segfault) {
  const struct rlimit no_core = {0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);  // a crash test should not litter core files
  ::raise(SIGSEGV);
  return nullptr;
}

FORKCHECK_WORKER(exit3) { ::_exit(3); }

// Ignores SIGTERM, then waits forever: only SIGKILL ends it.
FORKCHECK_WORKER(stubborn) {
  ::signal(SIGTERM, SIG_IGN);
  for (;;) ::pause();
}

// Waits forever, but SIGTERM ends it.
FORKCHECK_WORKER(sleeper) {
  for (;;) ::pause();
}

FORKCHECK_WORKER(big_result) { return big_result_text(); }

FORKCHECK_WORKER(read_global) { return g_set_in_main; }

FORKCHECK_WORKER(payload_size) { return payload.size(); }

// Leaves "B" in stdout's buffer: the worker's exit must flush it.
FORKCHECK_WORKER(print_b) {
  std::printf("B");
  return nullptr;
}

FORKCHECK_WORKER(read_env) {
  const char* v = std::getenv(payload.get<std::string>().c_str());
  return v ? nlohmann::json(v) : nlohmann::json(nullptr);
}

}  // namespace
}  // namespace fc::launch::test_workers
