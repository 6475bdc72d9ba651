/* A pool linked into the program (DT_NEEDED), set up as OpenBLAS's gotoblas_init does: its
 * constructor registers a pthread_atfork prepare handler that joins the pool, then starts three
 * workers. Its constructor runs before the watch shim's, so its handler runs after the shim's. */
#include "joinable_pool.h"

__attribute__((constructor)) static void start_linked_pool(void) {
  pthread_atfork(stop_pool, 0, 0);
  start_pool();
}

int fc_linked_pool_threads(void) { return pool_running ? kPoolWorkers : 0; }
