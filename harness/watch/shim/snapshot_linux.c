#include "snapshot.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "event_line.h"
#include "watch_shim.h"

/* Name prefixes of the runtimes that keep worker threads (threadpoolctl's list, plus TBB), and
 * libtorch_cpu, which is what brings them into a PyTorch program. */
static const char* const kRuntimes[] = {
    "libgomp",   "libomp",       "libiomp",           "libopenblas",
    "libmkl_rt", "libmkl_core",  "libmkl_gnu_thread", "libmkl_intel_thread",
    "libblis",   "libflexiblas", "libtbb.",           "libtorch_cpu",
};
#define FC_MAX_RUNTIMES 16

struct scan {
  struct fc_line* l;
  int listed;
  char cuda_path[512];
};

static const char* base_name(const char* path) {
  const char* b = strrchr(path, '/');
  return b ? b + 1 : path;
}

static int on_object(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  struct scan* s = data;
  if (!info->dlpi_name || !info->dlpi_name[0]) return 0;
  const char* base = base_name(info->dlpi_name);
  if (strncmp(base, "libcuda.so", 10) == 0 && strlen(info->dlpi_name) < sizeof s->cuda_path)
    memcpy(s->cuda_path, info->dlpi_name, strlen(info->dlpi_name) + 1);
  for (size_t i = 0; i < sizeof kRuntimes / sizeof kRuntimes[0]; ++i) {
    if (strncmp(base, kRuntimes[i], strlen(kRuntimes[i])) != 0) continue;
    if (s->listed >= FC_MAX_RUNTIMES) break;
    fc_line_raw(s->l, s->listed++ ? "," : "");
    fc_line_str(s->l, base, 64);
    break;
  }
  return 0;
}

static void cuda_state(struct fc_line* l, const char* path) {
  fc_line_key(l, "cuda");
  fc_line_raw(l, "{\"loaded\":");
  fc_line_bool(l, path[0] != 0);
  if (path[0]) {
    void* h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD); /* already mapped: no loading, no init */
    int (*get_count)(int*) = 0;
    if (h) {
      void* p = dlsym(h, "cuDeviceGetCount");
      memcpy(&get_count, &p, sizeof p);
    }
    int devices = 0;
    int rc = get_count ? get_count(&devices) : -1;
    fc_line_field_bool(l, "initialised", rc == 0);
    if (rc == 0) fc_line_field_i64(l, "devices", devices);
    if (h) dlclose(h);
  }
  fc_line_raw(l, "}");
}

void fc_snapshot_runtimes(struct fc_line* l) {
  struct scan s = {l, 0, {0}};
  fc_line_key(l, "runtimes");
  fc_line_raw(l, "[");
  dl_iterate_phdr(on_object, &s);
  fc_line_raw(l, "]");
  cuda_state(l, s.cuda_path);
}

static void command_line(struct fc_line* l) {
  char buf[512];
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
  if (fd >= 0) close(fd);
  if (n < 0) n = 0;
  while (n > 0 && buf[n - 1] == 0) --n;
  for (ssize_t i = 0; i < n; ++i)
    if (buf[i] == 0) buf[i] = ' ';
  buf[n] = 0;
  fc_line_field_str(l, "cmd", buf, sizeof buf);
}

static void frame(struct fc_line* l, void* addr, int first) {
  Dl_info info;
  char text[160];
  size_t n = 0;
  text[0] = 0;
  if (dladdr(addr, &info) && info.dli_fname) {
    const char* mod = info.dli_fname[0] ? base_name(info.dli_fname) : "(program)";
    size_t m = strlen(mod);
    if (m > 60) m = 60;
    memcpy(text, mod, m);
    n = m;
    uintptr_t base = (uintptr_t)info.dli_fbase, off = (uintptr_t)addr - base;
    if (info.dli_sname && info.dli_saddr) {
      size_t k = strlen(info.dli_sname);
      if (k > 60) k = 60;
      text[n++] = '!';
      memcpy(text + n, info.dli_sname, k);
      n += k;
      off = (uintptr_t)addr - (uintptr_t)info.dli_saddr;
    }
    static const char hex[] = "0123456789abcdef";
    char digits[16];
    size_t d = 0;
    do {
      digits[d++] = hex[off & 0xf];
      off >>= 4;
    } while (off && d < sizeof digits);
    memcpy(text + n, "+0x", 3);
    n += 3;
    while (d > 0) text[n++] = digits[--d];
    text[n] = 0;
  }
  fc_line_raw(l, first ? "" : ",");
  fc_line_str(l, n ? text : "?", sizeof text);
}

static int in_shim(void* addr) {
  Dl_info info;
  return dladdr(addr, &info) && info.dli_fname &&
         strstr(base_name(info.dli_fname), FC_SHIM_NAME) != 0;
}

void fc_snapshot_where(struct fc_line* l) {
  command_line(l);
  if (!fc_cfg.backtraces) return;
  void* frames[16];
  int n = backtrace(frames, 16);
  fc_line_key(l, "bt");
  fc_line_raw(l, "[");
  int shown = 0;
  for (int i = 0; i < n && shown < 8; ++i) {
    if (in_shim(frames[i])) continue;
    /* A return address points after the call: step back into it for the right line. */
    frame(l, (char*)frames[i] - 1, shown == 0);
    ++shown;
  }
  fc_line_raw(l, "]");
}
