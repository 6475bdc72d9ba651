/* forkcheck watch's subject for a pool linked into the program that stops its threads before
 * every fork (atfork_pool_lib.c): three workers run; fork; the child _exits. Not flagged. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int fc_linked_pool_threads(void);

int main(void) {
  printf("parent: %d pool threads running, stopped by their library before each fork\n",
         fc_linked_pool_threads());
  fflush(stdout); /* nothing buffered may be copied into the child */
  const pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
