// Hostile: D joins the process group of the child's parent (forkcheck's own), re-executes itself
// with an EMPTY environment (no run token), and blocks; the child exits at once. D's pid printed.
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "daemon") == 0) {
    for (;;) pause();
  }
  int ready[2];
  if (pipe(ready) != 0) return 1;
  const pid_t supervisor = getppid();
  pid_t d = fork();
  if (d == 0) {
    setpgid(0, getpgid(supervisor));
    close(ready[0]);
    close(ready[1]);
    char* args[] = {argv[0], "daemon", NULL};
    char* no_env[] = {NULL};
    execve("/proc/self/exe", args, no_env);
    _exit(127);
  }
  close(ready[1]);
  char b;
  if (read(ready[0], &b, 1) < 0) return 1;  // EOF once D has re-executed itself
  printf("%d\n", (int)d);
  return 0;
}
