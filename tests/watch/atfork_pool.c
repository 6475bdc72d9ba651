/* forkcheck watch's subject for a pool that stops its threads before every fork, as OpenBLAS does
 * (driver/others/memory.c registers blas_thread_shutdown_ with pthread_atfork, and its pool starts
 * again on the next call): three workers wait for work; a prepare handler, registered in main (so
 * after the shim's), stops and joins them; fork; the child _exits. With "unregistered" the handler
 * is not registered and the workers are still running at the fork (flagged).
 * Usage: watch_atfork_pool [unregistered] */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "joinable_pool.h"

int main(int argc, char** argv) {
  const int registered = !(argc > 1 && strcmp(argv[1], "unregistered") == 0);
  if (registered && pthread_atfork(stop_pool, 0, 0) != 0) return 99;
  start_pool();
  printf("parent: %d pool threads running, %s\n", kPoolWorkers,
         registered ? "stopped before each fork" : "left running at the fork");
  fflush(stdout); /* nothing buffered may be copied into the child */
  const pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
  }
  stop_pool();
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
