// The environment fingerprint's Windows facts: the version RtlGetVersion reports (GetVersionEx
// lies to programs without a manifest), the C runtime, processor groups and the affinity mask,
// no Yama, the CUDA driver as nvcuda.dll. See host_facts.h.
#include <cstdint>
#include <string>

#include "launch/host_facts.h"
#include "launch/win32.h"

namespace fc::launch {

nlohmann::json os_facts() {
  const std::string number = launch::win32::windows_version();
  return {{"name", "Windows " + number},
          {"sysname", "Windows"},
          {"kernel", number},
          {"machine", launch::win32::native_machine()}};
}

nlohmann::json libc_facts() {
  // MSVC always links the Universal C Runtime; mingw-w64 either it or the old msvcrt.dll.
#if defined(_MSC_VER) || defined(_UCRT)
  return {{"name", "UCRT (Universal C Runtime)"}, {"version", "unknown: it ships with Windows"}};
#else
  return {{"name", "msvcrt"}, {"version", "unknown: it ships with Windows"}};
#endif
}

nlohmann::json cpu_facts() {
  const DWORD online = ::GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
  const DWORD configured = ::GetMaximumProcessorCount(ALL_PROCESSOR_GROUPS);
  nlohmann::json affinity = nullptr;
  DWORD_PTR process_mask = 0, system_mask = 0;
  // The mask covers this process's processor group (at most 64 CPUs).
  if (::GetProcessAffinityMask(::GetCurrentProcess(), &process_mask, &system_mask)) {
    int n = 0;
    for (DWORD_PTR m = process_mask; m != 0; m &= m - 1) ++n;
    affinity = n;
  }
  return {{"online", online}, {"configured", configured}, {"affinity", affinity}};
}

nlohmann::json ptrace_scope() {
  return {{"value", nullptr},
          {"meaning",
           "no Yama on Windows: forkcheck walks a hung tree's stacks with dbghelp, which needs "
           "no debugger permission over its own children"}};
}

std::string cuda_driver_library(std::string&) { return "nvcuda.dll"; }

}  // namespace fc::launch
