// The environment fingerprint's macOS facts: uname and the product version (sysctl), libSystem,
// the CPU counts (sysctl; macOS has no affinity mask to read), no Yama, no CUDA. See
// host_facts.h.
#include <sys/sysctl.h>
#include <sys/types.h>
#include <sys/utsname.h>

#include <string>

#include "launch/host_facts.h"

namespace fc::launch {
namespace {

std::string sysctl_string(const char* name) {
  size_t size = 0;
  if (::sysctlbyname(name, nullptr, &size, nullptr, 0) != 0 || size == 0) return {};
  std::string value(size, '\0');
  if (::sysctlbyname(name, value.data(), &size, nullptr, 0) != 0) return {};
  value.resize(size > 0 && value[size - 1] == '\0' ? size - 1 : size);
  return value;
}

nlohmann::json sysctl_int(const char* name) {
  int value = 0;
  size_t size = sizeof value;
  if (::sysctlbyname(name, &value, &size, nullptr, 0) != 0) return nullptr;
  return value;
}

}  // namespace

nlohmann::json os_facts() {
  utsname u{};
  ::uname(&u);
  const std::string version = sysctl_string("kern.osproductversion");  // "14.5"
  return {{"name", version.empty() ? std::string("macOS") : "macOS " + version},
          {"sysname", u.sysname},
          {"kernel", u.release},
          {"kernel_build", u.version},
          {"machine", u.machine}};
}

nlohmann::json libc_facts() {
  // libSystem comes with the OS; its version is the OS build's.
  const std::string build = sysctl_string("kern.osversion");  // "23F79"
  return {{"name", "libSystem"}, {"version", build.empty() ? std::string("unknown") : build}};
}

nlohmann::json cpu_facts() {
  nlohmann::json online = sysctl_int("hw.activecpu");
  nlohmann::json configured = sysctl_int("hw.ncpu");
  // No affinity mask on macOS: a process may run on every active CPU.
  return {{"online", online.is_null() ? configured : online},
          {"configured", configured},
          {"affinity", nullptr}};
}

nlohmann::json ptrace_scope() {
  return {{"value", nullptr},
          {"meaning",
           "no Yama on macOS: attaching a debugger needs the debugger entitlement or root "
           "(System Integrity Protection)"}};
}

std::string cuda_driver_library(std::string& why) {
  why = "CUDA does not exist on macOS (no NVIDIA driver since macOS 10.14)";
  return {};
}

}  // namespace fc::launch
