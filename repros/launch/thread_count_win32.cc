// The thread count on Windows: a Toolhelp snapshot of every thread in the system, counting ours.
#include "launch/launch.h"
#include "launch/win32.h"

// Toolhelp's header needs <windows.h> first; win32.h is the one place that includes it.
#include <tlhelp32.h>

namespace fc::launch {

int thread_count() {
  win32::Handle snapshot(::CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0));
  if (!snapshot) return -1;
  const DWORD self = ::GetCurrentProcessId();
  int n = 0;
  THREADENTRY32 e{};
  e.dwSize = sizeof e;
  for (BOOL ok = ::Thread32First(snapshot.get(), &e); ok; ok = ::Thread32Next(snapshot.get(), &e))
    if (e.th32OwnerProcessID == self) ++n;
  return n > 0 ? n : -1;
}

}  // namespace fc::launch
