/* forkcheck watch's "nothing hazardous" subject: one thread all along, children started every
 * way that is not a hazard, and the watch kept through exec even when the environment is not:
 *   1. posix_spawn of this program ("fork-once", below) with an EMPTY environment;
 *   2. fork + execve of this program ("fork-once") with an environment without LD_PRELOAD;
 *   3. vfork + exec (no fork event at all: a vfork child can only exec or _exit);
 *   4. fork without exec, single-threaded: not hazardous either.
 * "fork-once" forks a child that exits 0 without exec (single-threaded, safe): its fork event
 * shows that the shim survived the scrubbed environments of 1 and 2.
 * Usage: watch_spawn_only [fork-once] */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int fork_once(void) {
  pid_t c = fork();
  if (c == 0) _exit(0);
  return wait_for(c) == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "fork-once") == 0) return fork_once();
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return 99;
  self[n] = 0;
  char* child_argv[] = {self, "fork-once", 0};
  char* empty_env[] = {0};
  char* scrubbed_env[] = {"FOO=bar", 0};

  pid_t p;
  if (posix_spawn(&p, self, 0, 0, child_argv, empty_env) != 0) return 99;
  printf("posix_spawn: %d\n", wait_for(p));
  fflush(stdout);

  p = fork();
  if (p == 0) {
    execve(self, child_argv, scrubbed_env);
    _exit(127);
  }
  printf("fork+exec: %d\n", wait_for(p));
  fflush(stdout);

  p = vfork();
  if (p == 0) {
    execv(self, child_argv);
    _exit(127);
  }
  printf("vfork+exec: %d\n", wait_for(p));
  fflush(stdout);

  printf("fork without exec: %d\n", fork_once());
  return 0;
}
