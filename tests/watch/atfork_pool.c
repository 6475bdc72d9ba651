/* forkcheck watch's subject for a pool that stops its threads before every fork, as OpenBLAS does
 * (driver/others/memory.c registers blas_thread_shutdown_ with pthread_atfork, and its pool starts
 * again on the next call): three workers wait for work; a prepare handler, registered in main (so
 * after the shim's), stops and joins them; fork; the child _exits. With "unregistered" the handler
 * is not registered and the workers are still running at the fork (flagged).
 * Usage: watch_atfork_pool [unregistered] */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { kWorkers = 3 };
static pthread_t workers[kWorkers];
static int running;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stop = PTHREAD_COND_INITIALIZER;
static int stopping;

static void* worker(void* arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  while (!stopping) pthread_cond_wait(&stop, &lock);
  pthread_mutex_unlock(&lock);
  return 0;
}

static void start_pool(void) {
  stopping = 0;
  for (int i = 0; i < kWorkers; ++i) pthread_create(&workers[i], 0, worker, 0);
  running = 1;
}

static void stop_pool(void) {
  if (!running) return;
  pthread_mutex_lock(&lock);
  stopping = 1;
  pthread_cond_broadcast(&stop);
  pthread_mutex_unlock(&lock);
  for (int i = 0; i < kWorkers; ++i) pthread_join(workers[i], 0);
  running = 0;
}

int main(int argc, char** argv) {
  const int registered = !(argc > 1 && strcmp(argv[1], "unregistered") == 0);
  if (registered && pthread_atfork(stop_pool, 0, 0) != 0) return 99;
  start_pool();
  printf("parent: %d pool threads running, %s\n", kWorkers,
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
