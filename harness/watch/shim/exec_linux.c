/* The exec family. In a recorded fork child, the exec is reported before it happens (a fork that
 * execs is not a hazard), and its failure after. In every process, the new image keeps the shim:
 * an environment passed without LD_PRELOAD or FORKCHECK_WATCH_DIR (subprocess with env=, a
 * scrubbed environment) gets them back, so the whole process tree stays watched.
 *
 * This runs between fork and exec, and in vfork children on their parent's stack: stack memory
 * only, no locks, and no writes to globals (a vfork child shares them with its parent). */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "child_event.h"
#include "watch_shim.h"

#define FC_MAX_ENV 8192 /* more entries than this: passed on untouched rather than copied */

enum exec_kind { K_EXECVE, K_EXECVPE, K_FEXECVE };

static int call_real(enum exec_kind kind, const char* path, int fd, char* const argv[],
                     char* const envp[]) {
  switch (kind) {
    case K_EXECVPE:
      return FC_REAL(execvpe)(path, argv, envp);
    case K_FEXECVE:
      return FC_REAL(fexecve)(fd, argv, envp);
    default:
      return FC_REAL(execve)(path, argv, envp);
  }
}

/* Out of line, and called only in a fork child: the 8 KiB line must not sit in the frame of
 * every exec, vfork children's included (they run on their parent's stack). */
__attribute__((noinline)) static void note_exec(const char* fn, const char* path, int fd,
                                                char* const argv[]) {
  struct fc_line l;
  fc_child_event_begin(&l, "exec");
  fc_line_field_str(&l, "fn", fn, 16);
  if (path)
    fc_line_field_str(&l, "path", path, 400);
  else
    fc_line_field_i64(&l, "fd", fd);
  fc_line_key(&l, "argv");
  fc_line_raw(&l, "[");
  for (int i = 0; argv && argv[i] && i < 8; ++i) {
    fc_line_raw(&l, i ? "," : "");
    fc_line_str(&l, argv[i], 200);
  }
  fc_line_raw(&l, "]");
  fc_line_write(&l);
}

__attribute__((noinline)) static void note_exec_failed(int err) {
  struct fc_line l;
  fc_child_event_begin(&l, "exec_failed");
  fc_line_field_i64(&l, "errno", err);
  fc_line_write(&l);
}

static size_t env_count(char* const envp[]) {
  size_t n = 0;
  while (envp && envp[n]) ++n;
  return n;
}

static int is_var(const char* entry, const char* name) {
  size_t n = strlen(name);
  return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

static const char* find_var(char* const envp[], const char* name) {
  for (size_t i = 0; envp && envp[i]; ++i)
    if (is_var(envp[i], name)) return envp[i];
  return 0;
}

static int preload_has_shim(const char* entry) { return entry && strstr(entry, FC_SHIM_NAME) != 0; }

/* Bytes needed for a rebuilt "LD_PRELOAD=shim:theirs". */
static size_t preload_need(char* const envp[]) {
  const char* theirs = find_var(envp, "LD_PRELOAD");
  return strlen(fc_cfg.preload_env) + (theirs ? strlen(theirs) : 0) + 2;
}

/* The environment to exec with: envp itself when it already carries the watch, else a copy in
 * `slots` (n + 3 entries) with LD_PRELOAD (the shim first, then theirs) in `pre` and
 * FORKCHECK_WATCH_DIR added. */
static char* const* keep_watch(char* const envp[], size_t n, char** slots, char* pre) {
  const char* theirs = find_var(envp, "LD_PRELOAD");
  const int has_dir = find_var(envp, FC_DIR_VAR) != 0;
  if (preload_has_shim(theirs) && has_dir) return envp;
  size_t k = strlen(fc_cfg.preload_env);
  memcpy(pre, fc_cfg.preload_env, k + 1);
  if (theirs && theirs[sizeof "LD_PRELOAD"] != 0 && !preload_has_shim(theirs)) {
    pre[k++] = ':';
    size_t t = strlen(theirs + sizeof "LD_PRELOAD");
    memcpy(pre + k, theirs + sizeof "LD_PRELOAD", t + 1);
  } else if (preload_has_shim(theirs)) {
    memcpy(pre, theirs, strlen(theirs) + 1);
  }
  size_t out = 0;
  for (size_t i = 0; i < n; ++i)
    if (!is_var(envp[i], "LD_PRELOAD")) slots[out++] = envp[i];
  slots[out++] = pre;
  if (!has_dir) slots[out++] = fc_cfg.dir_env;
  slots[out] = 0;
  return slots;
}

static int run_exec(enum exec_kind kind, const char* fn, const char* path, int fd,
                    char* const argv[], char* const envp[]) {
  if (!fc_cfg.active) return call_real(kind, path, fd, argv, envp);
  int saved = errno;
  const int fork_child = fc_in_fork_child();
  if (fork_child) note_exec(fn, kind == K_FEXECVE ? 0 : path, fd, argv);
  int rc;
  size_t n = env_count(envp);
  if (n > FC_MAX_ENV) {
    errno = saved;
    rc = call_real(kind, path, fd, argv, envp);
  } else {
    char* slots[n + 3];
    char pre[preload_need(envp)];
    char* const* env = keep_watch(envp, n, slots, pre);
    errno = saved;
    rc = call_real(kind, path, fd, argv, env);
  }
  int err = errno;
  if (fork_child) note_exec_failed(err);
  errno = err;
  return rc;
}

FC_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  return run_exec(K_EXECVE, "execve", path, -1, argv, envp);
}
FC_EXPORT int execv(const char* path, char* const argv[]) {
  return run_exec(K_EXECVE, "execv", path, -1, argv, environ);
}
FC_EXPORT int execvp(const char* file, char* const argv[]) {
  return run_exec(K_EXECVPE, "execvp", file, -1, argv, environ);
}
FC_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  return run_exec(K_EXECVPE, "execvpe", file, -1, argv, envp);
}
FC_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) {
  return run_exec(K_FEXECVE, "fexecve", 0, fd, argv, envp);
}

/* The execl forms: the arguments into an argv on the stack, then as above. The va_list goes
 * by pointer, so that the caller may go on reading it (execle's envp). */
static size_t count_args(const char* first, va_list* ap) {
  va_list c;
  va_copy(c, *ap);
  size_t n = first ? 1 : 0;
  if (first)
    while (va_arg(c, const char*)) ++n;
  va_end(c);
  return n;
}

static void fill_args(char** argv, const char* first, va_list* ap, size_t n) {
  argv[0] = (char*)first;
  for (size_t i = 1; i < n; ++i) argv[i] = va_arg(*ap, char*);
  if (first) (void)va_arg(*ap, char*); /* the terminating NULL */
  argv[n] = 0;
}

FC_EXPORT int execl(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  size_t n = count_args(arg, &ap);
  char* argv[n + 1];
  fill_args(argv, arg, &ap, n);
  va_end(ap);
  return run_exec(K_EXECVE, "execl", path, -1, argv, environ);
}

FC_EXPORT int execlp(const char* file, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  size_t n = count_args(arg, &ap);
  char* argv[n + 1];
  fill_args(argv, arg, &ap, n);
  va_end(ap);
  return run_exec(K_EXECVPE, "execlp", file, -1, argv, environ);
}

FC_EXPORT int execle(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  size_t n = count_args(arg, &ap);
  char* argv[n + 1];
  fill_args(argv, arg, &ap, n);
  char* const* envp = va_arg(ap, char* const*);
  va_end(ap);
  return run_exec(K_EXECVE, "execle", path, -1, argv, envp);
}

/* posix_spawn is no hazard (it execs at once), but its child must keep the watch too. */
static int run_spawn(int search, pid_t* pid, const char* path,
                     const posix_spawn_file_actions_t* actions, const posix_spawnattr_t* attr,
                     char* const argv[], char* const envp[]) {
  int (*real)(pid_t*, const char*, const posix_spawn_file_actions_t*, const posix_spawnattr_t*,
              char* const[], char* const[]) = search ? FC_REAL(posix_spawnp) : FC_REAL(posix_spawn);
  size_t n = env_count(envp);
  if (!fc_cfg.active || n > FC_MAX_ENV) return real(pid, path, actions, attr, argv, envp);
  char* slots[n + 3];
  char pre[preload_need(envp)];
  return real(pid, path, actions, attr, argv, keep_watch(envp, n, slots, pre));
}

FC_EXPORT int posix_spawn(pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions,
                          const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
  return run_spawn(0, pid, path, actions, attr, argv, envp);
}
FC_EXPORT int posix_spawnp(pid_t* pid, const char* file, const posix_spawn_file_actions_t* actions,
                           const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
  return run_spawn(1, pid, file, actions, attr, argv, envp);
}
