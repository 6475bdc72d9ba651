// The environment fingerprint's Linux facts: uname and os-release, glibc, the affinity mask,
// Yama. See host_facts.h.
#include <gnu/libc-version.h>
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "launch/host_facts.h"

namespace fc::launch {
namespace {

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

nlohmann::json os_facts() {
  utsname u{};
  ::uname(&u);
  std::string pretty;
  std::ifstream in("/etc/os-release");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("PRETTY_NAME=", 0) != 0) continue;
    pretty = line.substr(12);
    if (pretty.size() >= 2 && pretty.front() == '"' && pretty.back() == '"')
      pretty = pretty.substr(1, pretty.size() - 2);
  }
  return {{"name", pretty.empty() ? std::string(u.sysname) : pretty},
          {"sysname", u.sysname},
          {"kernel", u.release},
          {"kernel_build", u.version},
          {"machine", u.machine}};
}

nlohmann::json libc_facts() {
  return {
      {"name", "glibc"}, {"version", gnu_get_libc_version()}, {"release", gnu_get_libc_release()}};
}

nlohmann::json cpu_facts() {
  cpu_set_t set;
  CPU_ZERO(&set);
  nlohmann::json affinity = nullptr;
  if (::sched_getaffinity(0, sizeof set, &set) == 0) affinity = CPU_COUNT(&set);
  return {{"online", ::sysconf(_SC_NPROCESSORS_ONLN)},
          {"configured", ::sysconf(_SC_NPROCESSORS_CONF)},
          {"affinity", affinity}};
}

nlohmann::json ptrace_scope() {
  const std::string path = "/proc/sys/kernel/yama/ptrace_scope";
  const std::string v = first_line(path);
  if (v.empty())
    return {{"value", nullptr}, {"meaning", "no Yama (" + path + " absent): classic ptrace rules"}};
  static const char* meanings[] = {"classic: a process may attach to any process of its user",
                                   "restricted: only a parent (or a declared debugger) may attach",
                                   "admin-only: attaching needs CAP_SYS_PTRACE",
                                   "disabled: no process may attach"};
  int n = std::atoi(v.c_str());
  return {{"value", n}, {"meaning", n >= 0 && n <= 3 ? meanings[n] : "unknown"}};
}

std::string cuda_driver_library(std::string&) { return "libcuda.so.1"; }

}  // namespace fc::launch
