#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <cerrno>
#include <map>
#include <type_traits>

#include "harness/supervise/guardian.h"
#include "harness/supervise/interrupt.h"
#include "harness/supervise/reaper.h"
#include "launch/fdio_posix.h"

// The shared headers name processes by ProcessId (process_id.h): it must be pid_t itself here.
static_assert(std::is_same_v<pid_t, fc::harness::ProcessId>, "pid_t is not int: see process_id.h");

namespace fc::harness {
namespace {

int g_wake_write = -1;
std::map<pid_t, std::optional<int>> g_watched;

void on_sigchld(int) { Reaper::wake_from_signal_handler(); }

}  // namespace

Reaper& Reaper::instance() {
  static Reaper r;
  return r;
}

Reaper::Reaper() {
  record_inherited_signals();  // before SIGCHLD gets our handler
  // The self-pipe: close-on-exec, and non-blocking on both ends (a full pipe already means a
  // wake-up is pending; reap() drains it without blocking).
  auto ends = launch::detail::make_pipe();
  launch::detail::set_nonblocking(ends.first.get());
  launch::detail::set_nonblocking(ends.second.get());
  wake_read_ = ends.first.release();
  g_wake_write = ends.second.release();
  struct sigaction sa {};
  sa.sa_handler = on_sigchld;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  ::sigaction(SIGCHLD, &sa, nullptr);
#ifdef __linux__
  // Orphans of a supervised tree (a worker whose parent died, a grandchild that called setsid)
  // come to us rather than to init, so we can reap them and know they are gone.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
#endif
  // macOS has no subreaper: such orphans go to launchd, which reaps them. They are still found
  // by the run token in their environment and killed by the supervisor's finish().
}

void Reaper::wake_from_signal_handler() {
  int saved = errno;
  char b = 'w';
  [[maybe_unused]] ssize_t n = ::write(g_wake_write, &b, 1);  // full pipe: a wake-up is pending
  errno = saved;
}

void Reaper::watch(pid_t pid) { g_watched.emplace(pid, std::nullopt); }

void Reaper::reap() {
  char buf[64];
  while (::read(wake_read_, buf, sizeof buf) > 0) {
  }
  for (;;) {
    // Who is about to be reaped, without reaping it yet (WNOWAIT): the guardian forgets it first,
    // so that it never signals the group of a pid that reaping made free for reuse.
    siginfo_t info{};
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) break;
    const pid_t pid = info.si_pid;
    guardian_forget(pid);
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) != pid) break;
    auto it = g_watched.find(pid);
    if (it != g_watched.end()) it->second = status;
  }
}

std::optional<int> Reaper::take(pid_t pid) {
  auto it = g_watched.find(pid);
  if (it == g_watched.end() || !it->second) return std::nullopt;
  int status = *it->second;
  g_watched.erase(it);
  return status;
}

}  // namespace fc::harness
