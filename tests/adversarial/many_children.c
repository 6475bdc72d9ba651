// Hostile: argv[1] short-lived children (default 600), a new one every 10 ms, each living 150 ms
// (some fifteen alive at any time), then says "computing" on stdout and computes: a tree that a
// supervisor holding a descriptor for every process it ever saw would run out of descriptors on.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 600;
  for (int i = 0; i < n; ++i) {
    if (fork() == 0) {
      usleep(150 * 1000);
      _exit(0);
    }
    usleep(10 * 1000);
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
  }
  while (wait(NULL) > 0) {
  }
  puts("computing");
  fflush(stdout);
  volatile unsigned long x = 0;
  for (;;) x = x + 1;
}
