#include <sys/utsname.h>
#include <unistd.h>
#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "harness/platform/host.h"
#include "launch/boost_process_v1.h"

namespace fc::harness {

std::filesystem::path executable_path() {
#ifdef __APPLE__
  // macOS has no /proc: dyld knows the path the program was started by.
  uint32_t size = 0;
  _NSGetExecutablePath(nullptr, &size);
  std::vector<char> buf(size + 1, '\0');
  if (_NSGetExecutablePath(buf.data(), &size) != 0) return {};
  std::error_code ec;
  auto canonical = std::filesystem::canonical(buf.data(), ec);
  return ec ? std::filesystem::path(buf.data()) : canonical;
#else
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  buf[n] = '\0';
  return buf;
#endif
}

ProcessId current_process_id() { return ::getpid(); }

nlohmann::json host_platform() {
  utsname u{};
  ::uname(&u);
  return {{"os", u.sysname}, {"kernel", u.release}, {"machine", u.machine},
          {"cpus", ::sysconf(_SC_NPROCESSORS_ONLN)}};
}

std::string find_in_path(const std::string& name) { return bp::search_path(name).string(); }

bool is_executable_file(const std::string& path, std::string& why) {
  if (::access(path.c_str(), X_OK) == 0) return true;
  why = std::strerror(errno);
  return false;
}

}  // namespace fc::harness
