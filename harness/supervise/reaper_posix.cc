#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <cerrno>
#include <chrono>
#include <map>
#include <set>
#include <thread>
#include <type_traits>
#include <utility>

#include "harness/platform/process_handle.h"
#include "harness/supervise/guardian.h"
#include "harness/supervise/interrupt.h"
#include "harness/supervise/own_process.h"
#include "harness/supervise/reaper.h"
#include "launch/fdio_posix.h"
#include "launch/process_tree.h"

// The shared headers name processes by ProcessId (process_id.h): it must be pid_t itself here.
static_assert(std::is_same_v<pid_t, fc::harness::ProcessId>, "pid_t is not int: see process_id.h");

namespace fc::harness {
namespace {

int g_wake_write = -1;
std::map<pid_t, std::optional<int>> g_watched;
std::set<pid_t> g_held;
std::vector<Reaper::Reaped> g_reaped;  // unwatched children reaped since take_reaped()

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

// Afresh: an entry left by a child of the same pid that ended earlier (a helper nobody waited
// for) must not pass for this one's status.
void Reaper::watch(pid_t pid) { g_watched.insert_or_assign(pid, std::nullopt); }

void Reaper::unwatch(pid_t pid) {
  if (!g_held.count(pid)) g_watched.erase(pid);
}

void Reaper::end_child(pid_t pid, std::uint64_t start_time, double wait_s) {
  auto handle = ProcessHandle::open(pid, start_time);  // none: it ended, and was reaped already
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  bool killed = false;
  while (handle && !handle->ended()) {
    if (!killed && std::chrono::steady_clock::now() >= until) {
      handle->signal(SIGKILL);
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  reap_exited(/*walk=*/true);  // it is an exited child of ours, not held: reaped here
  unwatch(pid);
}

void Reaper::hold(pid_t pid) {
  watch(pid);
  g_held.insert(pid);
}

void Reaper::release(pid_t pid) {
  if (!g_held.erase(pid)) return;
  g_watched.erase(pid);
  guardian_forget(pid);  // before reaping frees its pid for reuse
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

namespace {

// A wait status (as waitpid gives it) from what waitid said.
int wait_status_of(const siginfo_t& info) {
  switch (info.si_code) {
    case CLD_EXITED:
      return (info.si_status & 0xff) << 8;
    case CLD_KILLED:
      return info.si_status & 0x7f;
    case CLD_DUMPED:
      return (info.si_status & 0x7f) | 0x80;
    default:
      return 0;
  }
}

// Reaps `pid` if it has exited, telling the guardian first; its wait status, or nullopt. An
// unwatched child (an orphan) is recorded with the CPU it used.
std::optional<int> reap_one(pid_t pid) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
      info.si_pid != pid)
    return std::nullopt;
  guardian_forget(pid);  // before reaping frees its pid for reuse
  const bool orphan = !g_watched.count(pid);
  std::uint64_t start_time = 0;
  if (orphan)
    if (auto f = launch::process_facts(pid))
      start_time = f->start_time;  // a zombie's stat is there
  int status = 0;
  rusage usage{};
  if (::wait4(pid, &status, WNOHANG, &usage) != pid) return std::nullopt;
  if (orphan) {
    auto ns = [](const timeval& t) {
      return static_cast<std::uint64_t>(t.tv_sec) * 1000000000ull +
             static_cast<std::uint64_t>(t.tv_usec) * 1000ull;
    };
    if (g_reaped.size() < 100000)
      g_reaped.push_back({pid, start_time, ns(usage.ru_utime) + ns(usage.ru_stime)});
  }
  return status;
}

}  // namespace

void Reaper::reap_exited(bool walk) {
  char buf[64];
  bool woken = false;
  while (::read(wake_read_, buf, sizeof buf) > 0) woken = true;
  // The held ones: their status, without reaping them.
  for (pid_t pid : g_held) {
    auto it = g_watched.find(pid);
    if (it == g_watched.end() || it->second) continue;
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid)
      it->second = wait_status_of(info);
  }
  auto record = [](pid_t pid, int status) {
    auto it = g_watched.find(pid);
    if (it != g_watched.end()) it->second = status;
  };
  if (g_held.empty()) {
    // Who is about to be reaped, without reaping it yet (WNOWAIT): the guardian forgets it first,
    // so that it never signals the group of a pid that reaping made free for reuse.
    for (;;) {
      siginfo_t info{};
      if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) break;
      auto status = reap_one(info.si_pid);
      if (!status) break;
      record(info.si_pid, *status);
    }
    return;
  }
  // With children held, waitid(P_ALL) could keep naming a held zombie: each other child instead,
  // when a SIGCHLD says one may have ended (a walk reads /proc; the loop comes here often).
  if (!woken && !walk) return;
  for (launch::ProcessId pid : launch::child_processes(::getpid())) {
    if (g_held.count(pid)) continue;
    if (auto status = reap_one(pid)) record(pid, *status);
  }
}

std::vector<Reaper::Reaped> Reaper::take_reaped() { return std::exchange(g_reaped, {}); }

std::optional<int> Reaper::take(pid_t pid) {
  auto it = g_watched.find(pid);
  if (it == g_watched.end() || !it->second) return std::nullopt;
  int status = *it->second;
  if (!g_held.count(pid)) g_watched.erase(it);  // a held one is erased by release()
  return status;
}

}  // namespace fc::harness
