// Hostile: busy at the deadline. Computes forever; with "parent", a parent that only waits for a
// child that computes forever (the tree works though the parent does not).
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void spin(void) {
  volatile unsigned long x = 0;
  for (;;) x = x + 1;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "parent") == 0) {
    if (fork() == 0) spin();
    wait(NULL);
    return 0;
  }
  spin();
}
