// Hostile: a grandchild moves into a process group of its own (setpgid: kill(-pgid) of the child's
// group no longer reaches it) and blocks; its pid is printed. "stay": the child blocks too;
// "leave": the child exits at once, leaving the escaper behind.
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  int ready[2];
  if (pipe(ready) != 0) return 1;
  pid_t g = fork();
  if (g == 0) {
    setpgid(0, 0);
    close(ready[0]);
    close(ready[1]);  // the parent's read sees EOF: the group is changed
    for (;;) pause();
  }
  close(ready[1]);
  char b;
  if (read(ready[0], &b, 1) < 0) return 1;
  printf("%d\n", (int)g);
  fflush(stdout);
  if (argc > 1 && strcmp(argv[1], "leave") == 0) return 0;
  for (;;) pause();
}
