// Ctrl-C, Ctrl-Break and closing the console end the run on Windows as SIGINT, SIGTERM and SIGHUP
// do on POSIX. Windows delivers them by running the handler on a thread of its own, not as a
// signal: it records which one came, as the C runtime's signal number (so the exit status is
// 128 + SIGINT = 130, as a shell reports it), and wakes the supervisor, which ends what runs and
// lets the run write its partial report. Supervised children run in process groups of their own
// (CREATE_NEW_PROCESS_GROUP), which Ctrl-C does not reach: ending them is forkcheck's business.
#include <atomic>
#include <csignal>

#include "harness/platform/win32.h"
#include "harness/supervise/interrupt.h"
#include "harness/supervise/reaper.h"

namespace fc::harness {
namespace {

std::atomic<int> g_signal{0};

// After a close, logoff or shutdown event Windows ends the process once the handler returns: hold
// it back a little so the main thread can end the jobs and write the partial report. (Returning
// from main ends the process and this wait with it.)
constexpr DWORD kCloseGraceMs = 4000;

BOOL WINAPI on_console_event(DWORD type) {
  int sig = 0;
  switch (type) {
    case CTRL_C_EVENT:
      sig = SIGINT;
      break;
    case CTRL_BREAK_EVENT:
      sig = SIGBREAK;
      break;
    case CTRL_CLOSE_EVENT:
    case CTRL_LOGOFF_EVENT:
    case CTRL_SHUTDOWN_EVENT:
      sig = SIGTERM;
      break;
    default:
      return FALSE;
  }
  int none = 0;
  g_signal.compare_exchange_strong(none, sig);
  Reaper::wake_from_signal_handler();
  if (sig == SIGTERM) ::Sleep(kCloseGraceMs);
  return TRUE;
}

}  // namespace

void install_interrupt_handlers() {
  Reaper::instance();  // the wake-up event must exist before an event can arrive
  ::SetConsoleCtrlHandler(on_console_event, TRUE);
}

int interrupted() { return g_signal.load(); }

// Windows has no Ctrl-Z that stops a console program.
bool stop_requested() { return false; }
void stop_now() {}

}  // namespace fc::harness
