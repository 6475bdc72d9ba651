/* forkcheck watch's first test subject: a thread is running ("fc_sleeper"), then
 *   1. fork, and the child does not exec: hazardous (two threads at fork time);
 *   2. fork, and the child execs this program again ("exec-child"): not hazardous.
 * Usage: watch_threaded_fork [STATUS]   ends with STATUS (default 0) after its children. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int wake[2];

static void* sleeper(void* arg) {
  (void)arg;
  char c;
  while (read(wake[0], &c, 1) < 0) {
  }
  return 0;
}

static int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char** argv) {
  if (argc > 1 && argv[1][0] == 'e') { /* exec-child */
    printf("exec'd child %s\n", argv[1]);
    return 0;
  }
  const int status = argc > 1 ? atoi(argv[1]) : 0;
  if (pipe(wake) != 0) return 99;
  pthread_t t;
  if (pthread_create(&t, 0, sleeper, 0) != 0) return 99;
  pthread_setname_np(t, "fc_sleeper");
  printf("parent: a thread is running\n");
  fflush(stdout); /* nothing buffered may be copied into the children */

  pid_t a = fork();
  if (a == 0) {
    printf("child without exec\n");
    fflush(stdout);
    _exit(5);
  }
  printf("fork without exec: child ended with %d\n", wait_for(a));
  fflush(stdout);

  pid_t b = fork();
  if (b == 0) {
    execl("/proc/self/exe", "watch_threaded_fork", "exec-child", (char*)0);
    _exit(127);
  }
  printf("fork and exec: child ended with %d\n", wait_for(b));

  if (write(wake[1], "x", 1) != 1) return 99;
  pthread_join(t, 0);
  printf("parent: done\n");
  return status;
}
