// What the torch cases' shared state needs on every POSIX system: clean-up at SIGTERM, one clock.
// The segment is the repro core's (core/shared_segment.h); the lock is in shared_lock_linux.cc /
// shared_lock_mac.cc.
#include "cases/support/shared_memory.h"

#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <stdexcept>

namespace fc::cases {
namespace {

// Kept in plain arrays: the handler may only make async-signal-safe calls (shm_unlink is an
// unlink of a name in practice, on Linux and macOS alike).
constexpr int kMaxPaths = 8;
char g_paths[kMaxPaths][256];
bool g_is_segment[kMaxPaths];
std::atomic<int> g_path_count{0};
std::atomic<pid_t> g_owner{-1};

void remove_and_reraise(int sig) {
  if (::getpid() == g_owner.load()) {
    for (int i = 0; i < g_path_count.load(); ++i) {  // in order: a directory's files come first
      if (g_is_segment[i]) {
        ::shm_unlink(g_paths[i]);
      } else if (::unlink(g_paths[i]) != 0) {
        ::rmdir(g_paths[i]);
      }
    }
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void remove_at_termination(const std::string& path, bool segment) {
  const int i = g_path_count.load();
  if (i >= kMaxPaths || path.size() >= sizeof g_paths[0])
    throw std::length_error("remove_on_termination: too many paths or too long: " + path);
  std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
  g_is_segment[i] = segment;
  g_path_count.store(i + 1);
  if (g_owner.exchange(::getpid()) != ::getpid()) {
    struct sigaction sa {};
    sa.sa_handler = remove_and_reraise;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGTERM, &sa, nullptr);
    ::sigaction(SIGINT, &sa, nullptr);
  }
}

}  // namespace

void remove_on_termination(const std::string& path) { remove_at_termination(path, false); }

void remove_segment_on_termination(const std::string& name) { remove_at_termination(name, true); }

double monotonic_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace fc::cases
