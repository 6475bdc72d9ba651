// Hostile: a chain of processes in the child's process group, each forking the next and exiting
// after argv[1] microseconds (default 500): always one generation ahead of whoever looks at the
// tree. The child itself exits at once; the chain lives for at most 10 s.
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char** argv) {
  const useconds_t gap = argc > 1 ? (useconds_t)atoi(argv[1]) : 500;
  const time_t until = time(NULL) + 10;
  if (fork() != 0) return 0;  // the child exits; the chain goes on
  while (time(NULL) < until) {
    if (fork() != 0) {
      usleep(gap);
      _exit(0);
    }
  }
  return 0;
}
