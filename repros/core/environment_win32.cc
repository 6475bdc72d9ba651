// The environment fingerprint's Windows facts: the version RtlGetVersion reports (GetVersionEx
// lies to programs without a manifest), the C runtime, processor groups and the affinity mask,
// no Yama, the CUDA driver as nvcuda.dll. See environment_platform.h.
#include <cstdint>
#include <string>

#include "core/environment_platform.h"
#include "launch/win32.h"

namespace fc::environment_platform {
namespace {

struct Version {
  unsigned long major = 0, minor = 0, build = 0;
  bool known = false;
};

Version windows_version() {
  // RTL_OSVERSIONINFOW by another name: OSVERSIONINFOW has the same layout.
  using RtlGetVersionFn = LONG(WINAPI*)(OSVERSIONINFOW*);
  Version v;
  HMODULE ntdll = ::GetModuleHandleW(L"ntdll.dll");
  if (ntdll == nullptr) return v;
  auto get = reinterpret_cast<RtlGetVersionFn>(
      reinterpret_cast<void*>(::GetProcAddress(ntdll, "RtlGetVersion")));
  OSVERSIONINFOW info{};
  info.dwOSVersionInfoSize = sizeof info;
  if (get == nullptr || get(&info) != 0) return v;
  v.major = info.dwMajorVersion;
  v.minor = info.dwMinorVersion;
  v.build = info.dwBuildNumber;
  v.known = true;
  return v;
}

std::string machine() {
  SYSTEM_INFO si{};
  ::GetNativeSystemInfo(&si);
  switch (si.wProcessorArchitecture) {
    case PROCESSOR_ARCHITECTURE_AMD64:
      return "x86_64";
    case PROCESSOR_ARCHITECTURE_ARM64:
      return "arm64";
    case PROCESSOR_ARCHITECTURE_INTEL:
      return "x86";
    default:
      return "unknown";
  }
}

}  // namespace

nlohmann::json os_facts() {
  const Version v = windows_version();
  const std::string number = v.known ? std::to_string(v.major) + "." + std::to_string(v.minor) +
                                           "." + std::to_string(v.build)
                                     : "unknown";
  return {{"name", "Windows " + number},
          {"sysname", "Windows"},
          {"kernel", number},
          {"machine", machine()}};
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

}  // namespace fc::environment_platform
