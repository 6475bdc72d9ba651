/* How a fork child ended, seen from both sides.
 *  - The parent: the wait family reports each child it reaps, with the full status (a signal
 *    too). This is the answer whenever the parent waits, as multiprocessing and most C do.
 *  - The child: exit, _exit and _Exit report the code before the real call, and a destructor
 *    catches a return from main; this answers when nobody waits (SIGCHLD ignored, the parent
 *    exits first), though not for a signal.
 * The harness prefers the parent's report and falls back on the child's. */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "child_event.h"
#include "watch_shim.h"

/* Out of line: the line's 8 KiB go on the stack only when there is something to write. */
__attribute__((noinline)) static void write_end(const char* how, int code, int known) {
  int saved = errno;
  fc_self.end_recorded = 1;
  struct fc_line l;
  fc_child_event_begin(&l, "end");
  fc_line_field_str(&l, "how", how, 16);
  if (known) fc_line_field_i64(&l, "code", code & 0xff);
  fc_line_write(&l);
  errno = saved;
}

static void note_end(const char* how, int code, int known) {
  if (fc_cfg.active && fc_in_fork_child() && !fc_self.end_recorded) write_end(how, code, known);
}

FC_EXPORT void exit(int status) {
  note_end("exit", status, 1);
  void (*real)(int) = FC_REAL(exit);
  if (real) real(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

FC_EXPORT void _exit(int status) {
  note_end("_exit", status, 1);
  void (*real)(int) = FC_REAL(_exit);
  if (real) real(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

FC_EXPORT void _Exit(int status) {
  note_end("_Exit", status, 1);
  void (*real)(int) = FC_REAL(_Exit);
  if (real) real(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

/* main returned (libc calls its own exit, not ours): the code is not known here. */
__attribute__((destructor)) static void fc_at_exit(void) { note_end("return", 0, 0); }

__attribute__((noinline)) static void note_reaped(pid_t child, int exited, int code, int sig,
                                                  int core) {
  if (!fc_cfg.active || child <= 0 || (!exited && !sig)) return;
  struct fc_line l;
  fc_line_begin(&l, "reaped");
  fc_line_field_i64(&l, "child", child);
  if (exited) fc_line_field_i64(&l, "code", code);
  if (sig) {
    fc_line_field_i64(&l, "signal", sig);
    if (core) fc_line_field_bool(&l, "core", 1);
  }
  fc_line_write(&l);
}

static void note_status(pid_t child, int status) {
  if (child <= 0 || !fc_cfg.active) return;
  if (WIFEXITED(status))
    note_reaped(child, 1, WEXITSTATUS(status), 0, 0);
  else if (WIFSIGNALED(status))
    note_reaped(child, 0, 0, WTERMSIG(status), WCOREDUMP(status));
}

/* Each wrapper waits into a status of its own, so that it sees the status even when the caller
 * passed NULL, and hands it back exactly where the real call would have. */
FC_EXPORT pid_t waitpid(pid_t pid, int* status, int options) {
  int st = 0;
  pid_t r = FC_REAL(waitpid)(pid, &st, options);
  if (r > 0) {
    int err = errno;
    if (status) *status = st;
    note_status(r, st);
    errno = err;
  }
  return r;
}

FC_EXPORT pid_t wait(int* status) {
  int st = 0;
  pid_t r = FC_REAL(wait)(&st);
  if (r > 0) {
    int err = errno;
    if (status) *status = st;
    note_status(r, st);
    errno = err;
  }
  return r;
}

FC_EXPORT pid_t wait3(int* status, int options, struct rusage* usage) {
  int st = 0;
  pid_t r = FC_REAL(wait3)(&st, options, usage);
  if (r > 0) {
    int err = errno;
    if (status) *status = st;
    note_status(r, st);
    errno = err;
  }
  return r;
}

FC_EXPORT pid_t wait4(pid_t pid, int* status, int options, struct rusage* usage) {
  int st = 0;
  pid_t r = FC_REAL(wait4)(pid, &st, options, usage);
  if (r > 0) {
    int err = errno;
    if (status) *status = st;
    note_status(r, st);
    errno = err;
  }
  return r;
}

FC_EXPORT int waitid(idtype_t idtype, id_t id, siginfo_t* info, int options) {
  siginfo_t own;
  siginfo_t* si = info ? info : &own;
  if (!info) own.si_pid = 0;
  int r = FC_REAL(waitid)(idtype, id, si, options);
  if (r == 0 && si->si_pid > 0) {
    int err = errno;
    if (si->si_code == CLD_EXITED)
      note_reaped(si->si_pid, 1, si->si_status, 0, 0);
    else if (si->si_code == CLD_KILLED || si->si_code == CLD_DUMPED)
      note_reaped(si->si_pid, 0, 0, si->si_status, si->si_code == CLD_DUMPED);
    errno = err;
  }
  return r;
}
