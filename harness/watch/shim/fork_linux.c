/* fork(): the parent records what the process held at the moment of the fork, the child only
 * remembers which fork made it (the exec and end wrappers report against it).
 *
 * Not wrapped: vfork (a wrapper cannot return in a vfork child without wrecking its parent's
 * stack, and a vfork child may only exec or _exit, which is no hazard), posix_spawn (no
 * hazard), _Fork and raw clone (not what Python's os.fork or libc's users call). */
#include <errno.h>

#include "event_line.h"
#include "snapshot.h"
#include "threads.h"
#include "watch_shim.h"

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

  /* Everything is measured before the real fork: that is the state the child inherits. */
  struct fc_line l;
  fc_line_begin(&l, "fork");
  fc_line_field_hex(&l, "img", img);
  fc_line_field_u64(&l, "seq", seq);
  fc_snapshot_threads(&l);
  fc_snapshot_runtimes(&l);
  fc_snapshot_where(&l);

  errno = saved;
  pid_t pid = real();
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
