#include <signal.h>

#include <csignal>

#include "harness/supervise/interrupt.h"
#include "harness/supervise/reaper.h"
#include "harness/supervise/own_process.h"

namespace fc::harness {
namespace {

volatile std::sig_atomic_t g_signal = 0;

void on_interrupt(int sig) {
  if (g_signal == 0) g_signal = sig;
  Reaper::wake_from_signal_handler();
}

}  // namespace

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
