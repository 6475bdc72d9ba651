#include <sys/resource.h>

#include "core/startup_cost.h"

namespace fc {
namespace {

double g_startup_cpu_s = 0;
bool g_noted = false;

double seconds(const timeval& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
}

}  // namespace

void note_startup_cost() {
  if (g_noted) return;
  g_noted = true;
  rusage u{};
  if (::getrusage(RUSAGE_SELF, &u) == 0) g_startup_cpu_s = seconds(u.ru_utime) + seconds(u.ru_stime);
}

double startup_cpu_s() { return g_startup_cpu_s; }

}  // namespace fc
