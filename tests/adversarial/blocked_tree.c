// Hostile: a tree of argv[1] processes (default 4), every one blocked in pause().
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4;
  for (int i = 1; i < n; ++i)
    if (fork() == 0) break;
  for (;;) pause();
}
