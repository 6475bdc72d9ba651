#include <signal.h>

#include <csignal>

#include "harness/supervise/interrupt.h"
#include "harness/supervise/reaper.h"
#include "launch/start_state_posix.h"

namespace fc::harness {
namespace {

volatile std::sig_atomic_t g_signal = 0;

void on_interrupt(int sig) {
  if (g_signal == 0) g_signal = sig;
  Reaper::wake_from_signal_handler();
}

bool g_recorded = false;
launch::detail::IgnoredSignals g_inherited;

}  // namespace

void record_inherited_signals() {
  if (g_recorded) return;
  g_recorded = true;
  g_inherited = launch::detail::IgnoredSignals::of_this_process();
}

std::vector<int> inherited_ignored_signals() {
  record_inherited_signals();
  std::vector<int> out;
  for (int sig = 1; sig < launch::detail::IgnoredSignals::kCount; ++sig)
    if (g_inherited.ignored[sig]) out.push_back(sig);
  return out;
}

void ignore_sigpipe() {
  record_inherited_signals();
  ::signal(SIGPIPE, SIG_IGN);
}

void install_interrupt_handlers() {
  record_inherited_signals();
  Reaper::instance();  // the wake-up pipe must exist before a signal can arrive
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

int interrupted() { return g_signal; }

}  // namespace fc::harness
