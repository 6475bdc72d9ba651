/* A pool linked into the program (DT_NEEDED), set up as OpenBLAS's gotoblas_init does: its
 * constructor registers a pthread_atfork prepare handler that joins the pool, then starts three
 * workers. Its constructor runs before the watch shim's, so its handler runs after the shim's. */
#include <pthread.h>

enum { kWorkers = 3 };
static pthread_t workers[kWorkers];
static int running, stopping;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stop = PTHREAD_COND_INITIALIZER;

static void* worker(void* arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  while (!stopping) pthread_cond_wait(&stop, &lock);
  pthread_mutex_unlock(&lock);
  return 0;
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

__attribute__((constructor)) static void start_pool(void) {
  pthread_atfork(stop_pool, 0, 0);
  for (int i = 0; i < kWorkers; ++i) pthread_create(&workers[i], 0, worker, 0);
  running = 1;
}

int fc_linked_pool_threads(void) { return running ? kWorkers : 0; }
