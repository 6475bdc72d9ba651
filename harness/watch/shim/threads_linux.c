#include "threads.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "event_line.h"
#include "watch_shim.h"

/* ---- creators: library names, interned; index 0 is "unknown" ---- */

#define FC_MAX_CREATORS 64
#define FC_CREATOR_LEN 48
static char creators[FC_MAX_CREATORS][FC_CREATOR_LEN];
static unsigned creator_count = 1;
static char creator_lock;

static const char* base_name(const char* path) {
  const char* b = strrchr(path, '/');
  return b ? b + 1 : path;
}

static unsigned intern(const char* name) {
  while (__atomic_test_and_set(&creator_lock, __ATOMIC_ACQUIRE)) {
  }
  unsigned found = 0;
  for (unsigned i = 1; i < creator_count; ++i)
    if (strncmp(creators[i], name, FC_CREATOR_LEN - 1) == 0) found = i;
  if (!found && creator_count < FC_MAX_CREATORS) {
    size_t n = strlen(name);
    if (n >= FC_CREATOR_LEN) n = FC_CREATOR_LEN - 1;
    memcpy(creators[creator_count], name, n);
    creators[creator_count][n] = 0;
    found = creator_count;
    __atomic_store_n(&creator_count, creator_count + 1, __ATOMIC_RELEASE);
  }
  __atomic_clear(&creator_lock, __ATOMIC_RELEASE);
  return found;
}

/* Libraries that only pass a thread start on (std::thread, libc itself): the creator that
 * matters is whoever called them. */
static int is_pass_through(const char* base) {
  return strncmp(base, "libstdc++", 9) == 0 || strncmp(base, "libc++", 6) == 0 ||
         strncmp(base, "libc.so", 7) == 0 || strncmp(base, "libpthread", 10) == 0 ||
         strncmp(base, FC_SHIM_NAME, sizeof FC_SHIM_NAME - 1) == 0;
}

/* The library name of a code address; the main program's name when it is the program's. */
static const char* library_of(void* addr, char* exe_buf, size_t exe_cap) {
  Dl_info info;
  if (!dladdr(addr, &info) || !info.dli_fname) return 0;
  if (info.dli_fname[0] != 0) return base_name(info.dli_fname);
  ssize_t n = readlink("/proc/self/exe", exe_buf, exe_cap - 1);
  if (n <= 0) return 0;
  exe_buf[n] = 0;
  return base_name(exe_buf);
}

static unsigned creator_of_call(void* ret_addr) {
  char exe[512];
  const char* lib = library_of(ret_addr, exe, sizeof exe);
  if (lib && is_pass_through(lib)) {
    /* Only then the unwinder: std::thread's caller is a few frames up. */
    void* frames[12];
    int n = backtrace(frames, 12);
    lib = 0;
    for (int i = 1; i < n && !lib; ++i) {
      const char* l = library_of(frames[i], exe, sizeof exe);
      if (l && !is_pass_through(l)) lib = l;
    }
  }
  return lib ? intern(lib) : 0;
}

/* ---- tid -> creator: open addressing over packed words (generation:16 creator:16 tid:32) ---- */

#define FC_TID_SLOTS 4096
#define FC_PROBES 16
static uint64_t tid_slots[FC_TID_SLOTS];
static uint64_t generation = 1; /* a fork child moves on: the parent's threads are not its own */

static uint64_t pack(pid_t tid, unsigned creator) {
  return (__atomic_load_n(&generation, __ATOMIC_RELAXED) << 48) | ((uint64_t)creator << 32) |
         (uint32_t)tid;
}

static void note_thread(pid_t tid, unsigned creator) {
  uint64_t gen = __atomic_load_n(&generation, __ATOMIC_RELAXED) & 0xffff;
  size_t home = ((uint32_t)tid * 2654435761u) % FC_TID_SLOTS;
  uint64_t word = pack(tid, creator);
  for (size_t i = 0; i < FC_PROBES; ++i) {
    uint64_t* slot = &tid_slots[(home + i) % FC_TID_SLOTS];
    uint64_t old = __atomic_load_n(slot, __ATOMIC_RELAXED);
    if (((old >> 48) != gen || (uint32_t)old == (uint32_t)tid) &&
        __atomic_compare_exchange_n(slot, &old, word, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
      return;
  }
  /* Full neighbourhood: most of it is threads long gone. */
  __atomic_store_n(&tid_slots[home], word, __ATOMIC_RELEASE);
}

const char* fc_thread_creator(pid_t tid) {
  uint64_t gen = __atomic_load_n(&generation, __ATOMIC_RELAXED) & 0xffff;
  size_t home = ((uint32_t)tid * 2654435761u) % FC_TID_SLOTS;
  for (size_t i = 0; i < FC_PROBES; ++i) {
    uint64_t w = __atomic_load_n(&tid_slots[(home + i) % FC_TID_SLOTS], __ATOMIC_ACQUIRE);
    if ((w >> 48) == gen && (uint32_t)w == (uint32_t)tid) {
      unsigned c = (unsigned)((w >> 32) & 0xffff);
      return c > 0 && c < __atomic_load_n(&creator_count, __ATOMIC_ACQUIRE) ? creators[c] : 0;
    }
  }
  return 0;
}

/* ---- the pthread_create wrapper: start records from a fixed pool, no allocation ---- */

#define FC_STARTS 256
struct fc_start {
  int busy;
  unsigned creator;
  void* (*fn)(void*);
  void* arg;
};
static struct fc_start starts[FC_STARTS];

static void* fc_thread_main(void* p) {
  struct fc_start* s = p;
  void* (*fn)(void*) = s->fn;
  void* arg = s->arg;
  note_thread(fc_gettid(), s->creator);
  __atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
  return fn(arg);
}

static struct fc_start* claim_start(void) {
  for (size_t i = 0; i < FC_STARTS; ++i) {
    int expected = 0;
    if (__atomic_compare_exchange_n(&starts[i].busy, &expected, 1, 0, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED))
      return &starts[i];
  }
  return 0;
}

FC_EXPORT int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*fn)(void*),
                             void* arg) {
  int (*real)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*) = FC_REAL(pthread_create);
  int saved = errno;
  fc_ensure_init();
  if (!fc_cfg.active) {
    errno = saved;
    return real(thread, attr, fn, arg);
  }
  unsigned creator = creator_of_call(__builtin_return_address(0));
  struct fc_start* s = creator ? claim_start() : 0;
  errno = saved;
  if (!s) return real(thread, attr, fn, arg); /* unattributed, otherwise unchanged */
  s->creator = creator;
  s->fn = fn;
  s->arg = arg;
  int rc = real(thread, attr, fc_thread_main, s);
  if (rc != 0) __atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
  return rc;
}

void fc_forget_threads(void) {
  uint64_t g = (__atomic_load_n(&generation, __ATOMIC_RELAXED) + 1) & 0xffff;
  __atomic_store_n(&generation, g ? g : 1, __ATOMIC_RELAXED);
  /* Threads the parent was starting at the fork never start here, and a thread that held the
   * creators' lock is not here to release it (entries below the count are complete). */
  for (size_t i = 0; i < FC_STARTS; ++i) __atomic_store_n(&starts[i].busy, 0, __ATOMIC_RELAXED);
  __atomic_clear(&creator_lock, __ATOMIC_RELAXED);
}

/* ---- the snapshot of live threads ---- */

#define FC_LIST_THREADS 64

/* /proc/self/task/<tid>/comm, without its newline, into name (16 bytes: the kernel's limit). */
static void thread_name(pid_t tid, char name[17]) {
  char path[64] = "/proc/self/task/";
  size_t n = strlen(path);
  n += fc_utoa((uint64_t)tid, path + n);
  memcpy(path + n, "/comm", 6);
  name[0] = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t r = read(fd, name, 16);
  close(fd);
  if (r <= 0) return;
  name[r] = 0;
  if (name[r - 1] == '\n') name[r - 1] = 0;
}

static pid_t parse_tid(const char* s) {
  pid_t v = 0;
  if (*s < '0' || *s > '9') return 0;
  for (; *s >= '0' && *s <= '9'; ++s) v = v * 10 + (*s - '0');
  return *s ? 0 : v;
}

/* A thread files its creator as the first thing it runs; one started just before the fork may
 * not have run yet. Give such threads a moment (at most 50 ms, only when one is pending). */
static void settle_thread_starts(void) {
  for (int round = 0; round < 500; ++round) {
    int pending = 0;
    for (size_t i = 0; i < FC_STARTS && !pending; ++i)
      pending = __atomic_load_n(&starts[i].busy, __ATOMIC_ACQUIRE);
    if (!pending) return;
    struct timespec pause = {0, 100 * 1000};
    nanosleep(&pause, 0);
  }
}

void fc_list_fork_threads(struct fc_fork_threads* t) {
  const int saved = errno;
  settle_thread_starts();
  t->count = 0;
  int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    char buf[4096] __attribute__((aligned(8)));
    for (;;) {
      long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        const struct dirent64* d = (const struct dirent64*)(const void*)(buf + off);
        off += d->d_reclen;
        pid_t tid = parse_tid(d->d_name);
        if (tid <= 0) continue;
        if (t->count < FC_FORK_TIDS) t->tids[t->count] = tid;
        ++t->count;
      }
    }
    close(fd);
  }
  t->listed = 1;
  errno = saved;
}

/* Whether thread `tid` of this process is still there and not on its way out: /proc's stat
 * state is not Z or X, and its flags lack PF_EXITING (a thread just joined can still be listed
 * for a moment after its joiner woke). */
static int still_there(pid_t tid) {
  char path[64] = "/proc/self/task/";
  size_t n = strlen(path);
  n += fc_utoa((uint64_t)tid, path + n);
  memcpy(path + n, "/stat", 6);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[512];
  ssize_t r = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (r <= 0) return 0;
  buf[r] = 0;
  const char* p = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
  if (!p || p[1] != ' ') return 0;
  const char state = p[2];
  if (state == 'Z' || state == 'X' || state == 'x') return 0;
  /* Fields after the state: ppid pgrp session tty_nr tpgid flags. */
  p += 3;
  for (int field = 0; field < 5 && p; ++field) {
    p = strchr(p + 1, ' ');
  }
  if (!p) return 1;
  uint64_t flags = 0;
  for (++p; *p >= '0' && *p <= '9'; ++p) flags = flags * 10 + (uint64_t)(*p - '0');
  return (flags & 0x4u) == 0; /* PF_EXITING */
}

void fc_write_fork_threads(struct fc_line* l, const struct fc_fork_threads* t) {
  pid_t self = fc_gettid(), pid = fc_getpid();
  char name[17];
  fc_line_field_i64(l, "tid", self);
  thread_name(self, name);
  fc_line_field_str(l, "tname", name, 16);
  fc_line_field_bool(l, "main", self == pid);

  const unsigned seen = t->count < FC_FORK_TIDS ? t->count : FC_FORK_TIDS;
  uint64_t count = t->count - seen, listed = 0; /* past the ids kept: counted as they were */
  fc_line_key(l, "thread_list");
  fc_line_raw(l, "[");
  for (unsigned i = 0; i < seen; ++i) {
    const pid_t tid = t->tids[i];
    if (tid != self && !still_there(tid)) continue;
    ++count;
    if (listed >= FC_LIST_THREADS) continue;
    thread_name(tid, name);
    fc_line_raw(l, listed ? ",{" : "{");
    fc_line_raw(l, "\"tid\":");
    fc_line_i64(l, tid);
    fc_line_field_str(l, "name", name, 16);
    const char* by = fc_thread_creator(tid);
    if (by) fc_line_field_str(l, "by", by, FC_CREATOR_LEN);
    fc_line_raw(l, "}");
    ++listed;
  }
  fc_line_raw(l, "]");
  fc_line_field_u64(l, "threads", count);
  if (listed < count) fc_line_field_u64(l, "threads_listed", listed);
}
