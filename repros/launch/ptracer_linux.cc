// PR_SET_PTRACER for the supervisor (ptracer.h). Linux: Yama is a Linux security module.
#include <sys/prctl.h>

#include <cerrno>
#include <climits>
#include <cstdlib>

#include "launch/ptracer.h"

namespace fc::launch {
namespace {

int read_ptracer_env() noexcept {
  const char* s = std::getenv("FORKCHECK_PTRACER");
  if (s == nullptr || *s == '\0') return 0;
  const int saved = errno;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s, &end, 10);
  const bool ok = errno == 0 && *end == '\0' && v > 0 && v <= INT_MAX;
  errno = saved;
  return ok ? static_cast<int>(v) : 0;
}

// Read during static initialisation, before main() and so before any fork: getenv is not
// async-signal-safe, and a fork child must only read what is already here.
const int g_ptracer = read_ptracer_env();

}  // namespace

void allow_supervisor_ptrace() noexcept {
  if (g_ptracer <= 0) return;
  const int saved = errno;
  // EINVAL without Yama (nothing to allow) or when the supervisor is gone: nothing to do either
  // way.
  (void)::prctl(PR_SET_PTRACER, static_cast<unsigned long>(g_ptracer), 0UL, 0UL, 0UL);
  errno = saved;
}

int supervisor_ptracer() noexcept { return g_ptracer; }

}  // namespace fc::launch
