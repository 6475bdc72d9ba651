#include <signal.h>

#include <csignal>

#include "harness/supervise/interrupt.h"
#include "harness/supervise/own_process.h"
#include "harness/supervise/reaper.h"

namespace fc::harness {
namespace {

volatile std::sig_atomic_t g_signal = 0;
volatile std::sig_atomic_t g_stop = 0;

void on_interrupt(int sig) {
  if (g_signal == 0) g_signal = sig;
  Reaper::wake_from_signal_handler();
}

// The trees run in process groups of their own, which the terminal's Ctrl-Z does not reach: the
// supervisor stops them before it stops itself.
void on_stop(int) {
  g_stop = 1;
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
  // Ctrl-Z, unless forkcheck was started with it ignored (a shell without job control).
  struct sigaction old {};
  if (::sigaction(SIGTSTP, nullptr, &old) == 0 && old.sa_handler != SIG_IGN) {
    struct sigaction st {};
    st.sa_handler = on_stop;
    sigemptyset(&st.sa_mask);
    st.sa_flags = SA_RESTART;
    ::sigaction(SIGTSTP, &st, nullptr);
  }
}

int interrupted() { return g_signal; }

bool stop_requested() { return g_stop != 0; }

void stop_now() {
  g_stop = 0;
  // SIGSTOP cannot be caught: forkcheck stops here, and the shell sees it stopped; the call
  // returns when something sends SIGCONT.
  ::raise(SIGSTOP);
}

}  // namespace fc::harness
