// graceful-shutdown's workers with POSIX signals, on Linux and macOS alike. See termination.h.
#include <signal.h>
#include <unistd.h>

#include <csignal>

#include "cases/support/termination.h"

namespace fc::cases::termination {
namespace {

volatile std::sig_atomic_t g_terminated = 0;
void on_sigterm(int) { g_terminated = 1; }

}  // namespace

int kill_signal() { return SIGKILL; }

const char* unavailable_reason() { return nullptr; }

void ignore_and_wait_forever() {
  ::signal(SIGTERM, SIG_IGN);  // a client loop that never looks at its signals
  for (;;) ::pause();
}

void wait_for_termination_request() {
  // Block SIGTERM, install the handler, then wait for it atomically.
  sigset_t term, old;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &term, &old);
  struct sigaction sa {};
  sa.sa_handler = &on_sigterm;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
  sigdelset(&old, SIGTERM);
  while (!g_terminated) ::sigsuspend(&old);
}

}  // namespace fc::cases::termination
