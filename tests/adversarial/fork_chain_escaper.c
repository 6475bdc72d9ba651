// Hostile: a chain of short-lived processes, each leaving the process group and session of the one
// before (setsid) and forking the next, forever: no group kill reaches it, and each generation
// lives for argv[1] microseconds (default 300), working most of that time. Only freezing every
// process found, round after round, stops it. With argv[2] "wait", the first process starts the
// chain and then waits, using no CPU, for a signal it has a handler for (so it may still go on:
// it is not stuck): the tree's work is all done by orphans that live between two looks. Run it
// where nothing can escape (a PID namespace).
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void on_usr1(int sig) { (void)sig; }

static void burn(useconds_t us) {
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000L + (now.tv_nsec - start.tv_nsec) / 1000 <
           (long)us);
}

int main(int argc, char** argv) {
  const useconds_t gap = argc > 1 ? (useconds_t)atoi(argv[1]) : 300;
  if (argc > 2 && fork() != 0) {
    signal(SIGUSR1, on_usr1);
    for (;;) pause();
  }
  for (;;) {
    const pid_t child = fork();
    if (child < 0) {
      usleep(1000);
      continue;
    }
    if (child != 0) {
      burn(gap);
      _exit(0);
    }
    setsid();
  }
}
