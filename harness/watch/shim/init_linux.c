/* The shim's state: the real functions, the configuration read at load, this image's identity. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "watch_shim.h"

struct fc_real_fns fc_real;
struct fc_config fc_cfg;
struct fc_self fc_self;

/* dlsym returns an object pointer; copying it into a function pointer is POSIX's way. */
static void load(void* slot, const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  memcpy(slot, &p, sizeof p);
}

void fc_resolve(void) {
  load(&fc_real.fork, "fork");
  load(&fc_real.execve, "execve");
  load(&fc_real.execvpe, "execvpe");
  load(&fc_real.fexecve, "fexecve");
  load(&fc_real.posix_spawn, "posix_spawn");
  load(&fc_real.posix_spawnp, "posix_spawnp");
  load(&fc_real.waitpid, "waitpid");
  load(&fc_real.wait, "wait");
  load(&fc_real.wait3, "wait3");
  load(&fc_real.wait4, "wait4");
  load(&fc_real.waitid, "waitid");
  load(&fc_real.exit, "exit");
  load(&fc_real._exit, "_exit");
  load(&fc_real._Exit, "_Exit");
  load(&fc_real.pthread_create, "pthread_create");
}

pid_t fc_getpid(void) { return (pid_t)syscall(SYS_getpid); }
pid_t fc_gettid(void) { return (pid_t)syscall(SYS_gettid); }

uint64_t fc_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* splitmix64: a fork child's image id from its parent's, the fork and its own pid. */
static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15u;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

int fc_in_fork_child(void) { return fc_self.fork_child && fc_self.pid == fc_getpid(); }

void fc_become_fork_child(pid_t parent, uint64_t parent_img, uint64_t seq) {
  pid_t me = fc_getpid();
  fc_self.parent = parent;
  fc_self.parent_img = parent_img;
  fc_self.parent_seq = seq;
  fc_self.pid = me;
  fc_self.end_recorded = 0;
  fc_self.img = mix(parent_img ^ mix(seq) ^ ((uint64_t)me << 32));
  fc_self.forks = 0;
  fc_self.fork_child = 1;
}

static void copy_capped(char* dst, size_t cap, const char* src) {
  size_t n = strlen(src);
  if (n >= cap) n = cap - 1;
  memcpy(dst, src, n);
  dst[n] = 0;
}

/* Reads the configuration once: from the constructor, or earlier from a wrapper, since other
 * libraries' constructors (a BLAS starting its pool) may run before this library's. */
static int init_state; /* 0 not yet, 1 under way, 2 done */

static void init_once(void);

void fc_ensure_init(void) {
  if (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == 2) return;
  int expected = 0;
  if (!__atomic_compare_exchange_n(&init_state, &expected, 1, 0, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE))
    return; /* another thread is at it: this call passes through unwatched */
  init_once();
  __atomic_store_n(&init_state, 2, __ATOMIC_RELEASE);
}

__attribute__((constructor)) static void fc_init(void) { fc_ensure_init(); }

static void init_once(void) {
  fc_resolve();
  const unsigned char* r = (const unsigned char*)getauxval(AT_RANDOM);
  uint64_t img = 0;
  if (r) memcpy(&img, r + 8, sizeof img); /* the first half seeds the stack protector */
  fc_self.img = mix(img ^ (uint64_t)fc_getpid());

  const char* dir = getenv(FC_DIR_VAR);
  if (!dir || dir[0] != '/' || strlen(dir) >= sizeof fc_cfg.dir)
    return; /* inactive: pass through */
  copy_capped(fc_cfg.dir, sizeof fc_cfg.dir, dir);
  memcpy(fc_cfg.dir_env, FC_DIR_VAR "=", sizeof FC_DIR_VAR); /* "NAME=", no NUL */
  copy_capped(fc_cfg.dir_env + sizeof FC_DIR_VAR, sizeof fc_cfg.dir_env - sizeof FC_DIR_VAR, dir);
  /* This library as the loader named it (the path in LD_PRELOAD); any address in it will do. */
  Dl_info self;
  if (!dladdr(&fc_cfg, &self) || !self.dli_fname || !self.dli_fname[0]) return;
  const size_t name = sizeof "LD_PRELOAD"; /* with the '=' that replaces the NUL */
  memcpy(fc_cfg.preload_env, "LD_PRELOAD=", name);
  copy_capped(fc_cfg.preload_env + name, sizeof fc_cfg.preload_env - name, self.dli_fname);
  const char* bt = getenv("FORKCHECK_WATCH_BACKTRACE");
  fc_cfg.backtraces = !(bt && strcmp(bt, "0") == 0);
  fc_cfg.active = 1;
  fc_watch_fork_prepare();
}
