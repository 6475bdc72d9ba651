// The reaper on Windows: nothing to reap. There is no SIGCHLD and no zombie; the supervisor learns
// that a child ended by waiting on its process handle and reads the exit code from it. What is left
// is the wake-up: one event, set by the console control handler (interrupt_win32.cc), that the
// supervisor's WaitForMultipleObjects includes, as the POSIX self-pipe is in its poll().
#include "harness/platform/win32.h"
#include "harness/supervise/reaper.h"

namespace fc::harness {

HANDLE win32::wake_event() {
  // Auto-reset: one wait consumes it. Never closed: it lives as long as the process.
  static const HANDLE event = ::CreateEventW(nullptr, FALSE, FALSE, nullptr);
  return event;
}

Reaper& Reaper::instance() {
  static Reaper r;
  return r;
}

Reaper::Reaper() { (void)win32::wake_event(); }  // exists before any handler can set it

void Reaper::wake_from_signal_handler() { ::SetEvent(win32::wake_event()); }

void Reaper::watch(ProcessId) {}

void Reaper::unwatch(ProcessId) {}

void Reaper::end_child(ProcessId, std::uint64_t, double) {}

void Reaper::hold(ProcessId) {}

void Reaper::release(ProcessId) {}

void Reaper::reap_exited(bool) {}

std::optional<int> Reaper::take(ProcessId) { return std::nullopt; }

std::vector<Reaper::Reaped> Reaper::take_reaped() { return {}; }

}  // namespace fc::harness
