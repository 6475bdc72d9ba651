/* Three worker threads that wait until stopped, and stop_pool() that joins them: the pool a
 * pthread_atfork prepare handler stops before a fork, as OpenBLAS's blas_thread_shutdown_ does.
 * One copy per file that includes it. */
#ifndef FC_TESTS_WATCH_JOINABLE_POOL_H
#define FC_TESTS_WATCH_JOINABLE_POOL_H

#include <pthread.h>

enum { kPoolWorkers = 3 };
static pthread_t pool_workers[kPoolWorkers];
static int pool_running, pool_stopping;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_stop = PTHREAD_COND_INITIALIZER;

static void* pool_worker(void* arg) {
  (void)arg;
  pthread_mutex_lock(&pool_lock);
  while (!pool_stopping) pthread_cond_wait(&pool_stop, &pool_lock);
  pthread_mutex_unlock(&pool_lock);
  return 0;
}

static void start_pool(void) {
  pool_stopping = 0;
  for (int i = 0; i < kPoolWorkers; ++i) pthread_create(&pool_workers[i], 0, pool_worker, 0);
  pool_running = 1;
}

static void stop_pool(void) {
  if (!pool_running) return;
  pthread_mutex_lock(&pool_lock);
  pool_stopping = 1;
  pthread_cond_broadcast(&pool_stop);
  pthread_mutex_unlock(&pool_lock);
  for (int i = 0; i < kPoolWorkers; ++i) pthread_join(pool_workers[i], 0);
  pool_running = 0;
}

#endif
