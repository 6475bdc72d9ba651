/* libforkcheck_watch.so, the shim `forkcheck watch` preloads into the user's program: what its
 * files share. The shim runs inside someone else's process, between fork and exec too, so it is
 * C against libc alone: no C++ runtime, no allocation and no locks on any path a fork child can
 * take before exec, errno left as the program would see it without the shim.
 *
 * Events are JSON lines appended to FORKCHECK_WATCH_DIR/<pid>.jsonl, one write() each; a file is
 * opened and closed around every event, so a program that closes or dup2()s over its descriptors
 * cannot lose or misdirect them.
 *
 * What it cannot see: static and setuid programs (the loader preloads nothing into them), forks
 * made with raw clone or vfork (vfork is safe by construction: its child can only exec or exit).
 * The parent's snapshot takes the dynamic loader's lock (dl_iterate_phdr, dladdr): a fork from a
 * signal handler that interrupted the loader itself would wait for it. The shim is 64-bit: a
 * 32-bit program gets the loader's "wrong ELF class" line on stderr and runs unwatched. */
#ifndef FC_WATCH_SHIM_H
#define FC_WATCH_SHIM_H

#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

#define FC_EXPORT __attribute__((visibility("default")))

/* The functions the shim wraps, as libc defines them: resolved with dlsym(RTLD_NEXT) once, in
 * the constructor, so that no wrapper has to call dlsym (which allocates) in a fork child. */
struct fc_real_fns {
  pid_t (*fork)(void);
  int (*execve)(const char*, char* const[], char* const[]);
  int (*execvpe)(const char*, char* const[], char* const[]);
  int (*fexecve)(int, char* const[], char* const[]);
  int (*posix_spawn)(pid_t*, const char*, const posix_spawn_file_actions_t*,
                     const posix_spawnattr_t*, char* const[], char* const[]);
  int (*posix_spawnp)(pid_t*, const char*, const posix_spawn_file_actions_t*,
                      const posix_spawnattr_t*, char* const[], char* const[]);
  pid_t (*waitpid)(pid_t, int*, int);
  pid_t (*wait)(int*);
  pid_t (*wait3)(int*, int, struct rusage*);
  pid_t (*wait4)(pid_t, int*, int, struct rusage*);
  int (*waitid)(idtype_t, id_t, siginfo_t*, int);
  void (*exit)(int);
  void (*_exit)(int);
  void (*_Exit)(int);
  int (*pthread_create)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
};
extern struct fc_real_fns fc_real;
void fc_resolve(void);
/* A wrapper can run before the constructor (another library's constructor creating a thread). */
#define FC_REAL(fn) (fc_real.fn ? fc_real.fn : (fc_resolve(), fc_real.fn))

/* Read once at load. */
struct fc_config {
  int active; /* FORKCHECK_WATCH_DIR is set: record events and keep the variables in children */
  char dir[1024];
  char dir_env[1100];     /* "FORKCHECK_WATCH_DIR=<dir>", added back to an exec'd environment */
  char preload_env[1100]; /* "LD_PRELOAD=<this library>", added back to an exec'd environment */
  int backtraces;         /* FORKCHECK_WATCH_BACKTRACE != "0" */
};
extern struct fc_config fc_cfg;
/* Loads fc_cfg unless done: the fork and pthread_create wrappers call it first. */
void fc_ensure_init(void);
#define FC_DIR_VAR "FORKCHECK_WATCH_DIR"
#define FC_SHIM_NAME "libforkcheck_watch"

/* This process image, and the fork that made it, while it has not exec'd. */
struct fc_self {
  uint64_t img;   /* random per image (AT_RANDOM), re-derived in every fork child */
  uint64_t forks; /* forks this image has made: each fork's sequence number */
  int fork_child; /* made by a recorded fork, not exec'd since */
  pid_t pid;      /* the fork child's pid: a vfork child shares this memory and is not it */
  pid_t parent;
  uint64_t parent_img, parent_seq;
  int end_recorded;
};
extern struct fc_self fc_self;

/* Registers the fork wrapper's prepare handler (it lists the threads alive at the fork). */
void fc_watch_fork_prepare(void);

/* Whether the caller is a recorded fork child that has not exec'd (false in a vfork child,
 * which runs in its parent's memory). Async-signal-safe. */
int fc_in_fork_child(void);
/* Called in the child, right after a recorded fork: nothing but stores and a getpid. */
void fc_become_fork_child(pid_t parent, uint64_t parent_img, uint64_t seq);

pid_t fc_getpid(void);
pid_t fc_gettid(void);
uint64_t fc_now_ns(void);

#endif
