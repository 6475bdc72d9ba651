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

/* The fork this thread is making: the threads its prepare handler lists. Initial-exec: the
 * shim is preloaded, and its TLS is then static (no allocation on first use). */
static __thread struct fc_fork_threads* pending_fork __attribute__((tls_model("initial-exec")));

/* Among the pthread_atfork prepare handlers, which run last-registered first, this one runs after
 * those of every library loaded after the shim: one that stops its threads there (OpenBLAS joins
 * its pool in blas_thread_shutdown_) has done so. For one that ran after it (a library linked
 * into the program registers before the shim), fc_write_fork_threads leaves out what is gone. */
static void list_threads_at_fork(void) {
  struct fc_fork_threads* t = pending_fork;
  if (t && !t->listed) fc_list_fork_threads(t);
}

void fc_watch_fork_prepare(void) { pthread_atfork(list_threads_at_fork, 0, 0); }

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
   * threads last: listed by the prepare handler, written after the fork. */
  struct fc_line l;
  fc_line_begin(&l, "fork");
  fc_line_field_hex(&l, "img", img);
  fc_line_field_u64(&l, "seq", seq);
  fc_snapshot_runtimes(&l);
  fc_snapshot_where(&l);
  struct fc_fork_threads threads;
  threads.listed = 0;
  struct fc_fork_threads* const outer = pending_fork; /* a fork made from a signal handler */
  pending_fork = &threads;

  errno = saved;
  pid_t pid = real();
  pending_fork = outer;
  if (pid == 0) {
    fc_become_fork_child(parent, img, seq);
    fc_forget_threads();
    return 0;
  }
  int after = errno;
  if (pid > 0) {
    if (!threads.listed) fc_list_fork_threads(&threads); /* no prepare handler ran */
    fc_write_fork_threads(&l, &threads);
    fc_line_field_i64(&l, "child", pid);
    fc_line_write(&l);
  }
  errno = after;
  return pid;
}
