/* fork(): the parent records what the process held at the moment of the fork, the child only
 * remembers which fork made it (the exec and end wrappers report against it).
 *
 * Not wrapped: vfork (a wrapper cannot return in a vfork child without wrecking its parent's
 * stack, and a vfork child may only exec or _exit, which is no hazard), posix_spawn (no
 * hazard), _Fork and raw clone (not what Python's os.fork or libc's users call). */
#include <errno.h>
#include <pthread.h>

#include "event_line.h"
#include "snapshot.h"
#include "threads.h"
#include "watch_shim.h"

/* The fork this thread is making: its line, whose thread list the prepare handler fills in. */
static __thread struct fc_line* pending_fork;
static int prepare_registered;

/* Among the pthread_atfork prepare handlers, which run last-registered first, this one runs after
 * those of every library loaded after the shim: one that stops its threads there (OpenBLAS joins
 * its pool in blas_thread_shutdown_) has done so, and the threads listed are the ones alive when
 * the child is copied. */
static void list_threads_at_fork(void) {
  struct fc_line* l = pending_fork;
  if (!l) return;
  pending_fork = 0;
  fc_snapshot_threads(l);
}

void fc_watch_fork_prepare(void) {
  prepare_registered = pthread_atfork(list_threads_at_fork, 0, 0) == 0;
}

FC_EXPORT pid_t fork(void) {
  int saved = errno;
  pid_t (*real)(void) = FC_REAL(fork);
  fc_ensure_init();
  if (!fc_cfg.active) {
    errno = saved;
    return real();
  }
  const pid_t parent = fc_getpid();
  const uint64_t img = fc_self.img;
  const uint64_t seq = __atomic_add_fetch(&fc_self.forks, 1, __ATOMIC_RELAXED);

  /* Everything is measured before the real fork: that is the state the child inherits. The
   * threads last, from the prepare handler, when there is one. */
  struct fc_line l;
  fc_line_begin(&l, "fork");
  fc_line_field_hex(&l, "img", img);
  fc_line_field_u64(&l, "seq", seq);
  fc_snapshot_runtimes(&l);
  fc_snapshot_where(&l);
  if (prepare_registered)
    pending_fork = &l;
  else
    fc_snapshot_threads(&l);

  errno = saved;
  pid_t pid = real();
  pending_fork = 0;
  if (pid == 0) {
    fc_become_fork_child(parent, img, seq);
    fc_forget_threads();
    return 0;
  }
  int after = errno;
  if (pid > 0) {
    fc_line_field_i64(&l, "child", pid);
    fc_line_write(&l);
  }
  errno = after;
  return pid;
}
