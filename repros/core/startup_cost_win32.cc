#include "launch/win32.h"  // the one place that includes <windows.h>

#include "core/startup_cost.h"

namespace fc {
namespace {

double g_startup_cpu_s = 0;
bool g_noted = false;

double seconds(const FILETIME& t) {  // 100-ns units
  ULARGE_INTEGER v;
  v.LowPart = t.dwLowDateTime;
  v.HighPart = t.dwHighDateTime;
  return static_cast<double>(v.QuadPart) * 1e-7;
}

}  // namespace

void note_startup_cost() {
  if (g_noted) return;
  g_noted = true;
  FILETIME created, exited, kernel, user;
  if (GetProcessTimes(GetCurrentProcess(), &created, &exited, &kernel, &user))
    g_startup_cpu_s = seconds(kernel) + seconds(user);
}

double startup_cpu_s() { return g_startup_cpu_s; }

}  // namespace fc
