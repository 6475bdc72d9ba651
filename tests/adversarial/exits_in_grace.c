// Hostile: blocks until SIGTERM, then takes 0.2 s (within the grace period) and exits with 7:
// ended because it was signalled, by an exit of its own.
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

static volatile sig_atomic_t termed = 0;
static void on_term(int sig) {
  (void)sig;
  termed = 1;
}

int main(void) {
  struct sigaction sa = {0};
  sa.sa_handler = on_term;
  sigaction(SIGTERM, &sa, NULL);
  while (!termed) pause();
  usleep(200 * 1000);
  return 7;
}
