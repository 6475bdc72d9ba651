// Hostile, for the pid-reuse probe: the child forks M, M forks G and exits at once (G is
// re-parented to the supervisor, a subreaper, and adopted by the tree); G leaves for a session
// of its own, lives 0.3 s and exits (and is reaped by the supervisor). The child blocks.
#include <unistd.h>

int main(void) {
  if (fork() == 0) {
    if (fork() == 0) {
      setsid();
      usleep(300 * 1000);
      _exit(0);
    }
    _exit(0);
  }
  for (;;) pause();
}
