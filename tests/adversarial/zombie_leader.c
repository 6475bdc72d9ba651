// Hostile: a zombie group leader with a daemon. The child forks G, which leads a group of its own
// and forks D; D leaves for a session of its own, drops its stdio and re-executes itself with an
// EMPTY environment (no run token to be found by), then blocks. G exits and the child never reaps
// it: a zombie leader whose daemon lives on. The child prints D's pid (and writes it to argv[2]
// when given); "block": it then blocks, "exit": it exits at once.
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "daemon") == 0) {
    for (;;) pause();
  }
  int ready[2];
  if (pipe(ready) != 0) return 1;
  pid_t g = fork();
  if (g == 0) {
    setpgid(0, 0);
    pid_t d = fork();
    if (d == 0) {
      setsid();
      int null = open("/dev/null", O_RDWR);
      dup2(null, 0);
      dup2(null, 1);
      dup2(null, 2);
      pid_t self = getpid();
      if (write(ready[1], &self, sizeof self) < 0) _exit(1);
      close(ready[0]);
      close(ready[1]);
      char* args[] = {argv[0], "daemon", NULL};
      char* no_env[] = {NULL};
      execve("/proc/self/exe", args, no_env);
      _exit(127);
    }
    _exit(0);  // the child never waits for it: a zombie leader
  }
  close(ready[1]);
  pid_t d = 0;
  if (read(ready[0], &d, sizeof d) != (ssize_t)sizeof d) return 1;
  usleep(50 * 1000);  // D has re-executed itself
  printf("%d\n", (int)d);
  fflush(stdout);
  if (argc > 2) {
    FILE* f = fopen(argv[2], "w");
    if (f) {
      fprintf(f, "%d\n", (int)d);
      fclose(f);
    }
  }
  if (argc > 1 && strcmp(argv[1], "exit") == 0) return 0;
  for (;;) pause();
}
