#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
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

namespace {

// Whether the kernel knows formats beyond #! and its own binaries (Linux's binfmt_misc: a
// registered handler for Java, wine, an emulator): then the first bytes prove nothing.
bool other_formats_registered() {
#ifdef __linux__
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/sys/fs/binfmt_misc", ec)) {
    const auto name = e.path().filename().string();
    if (name != "register" && name != "status") return true;
  }
#endif
  return false;
}

bool native_binary(const unsigned char* b, size_t n) {
  if (n >= 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F') return true;
#ifdef __APPLE__
  if (n >= 4) {
    std::uint32_t magic;
    std::memcpy(&magic, b, sizeof magic);
    for (std::uint32_t m : {0xfeedfaceu, 0xfeedfacfu, 0xcefaedfeu, 0xcffaedfeu, 0xcafebabeu, 0xbebafecau})
      if (magic == m) return true;
  }
#endif
  return false;
}

}  // namespace

// What execve() would refuse, found before anything is written: not a regular file, no execute
// permission, neither a native binary nor a #! script (ENOEXEC), a #! interpreter that does not
// exist.
bool is_executable_file(const std::string& path, std::string& why) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    why = std::strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    why = S_ISDIR(st.st_mode) ? "it is a directory" : "it is not a regular file";
    return false;
  }
  if (::access(path.c_str(), X_OK) != 0) {
    why = std::strerror(errno);
    return false;
  }
  unsigned char head[256] = {};
  size_t n = 0;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    n = std::fread(head, 1, sizeof head - 1, f);
    std::fclose(f);
  } else {
    return true;  // execute-only: the kernel may still run it
  }
  if (n >= 2 && head[0] == '#' && head[1] == '!') {
    std::string line(reinterpret_cast<const char*>(head) + 2, n - 2);
    line = line.substr(0, line.find('\n'));
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos) {
      why = "its #! line names no interpreter";
      return false;
    }
    const std::string interpreter = line.substr(start, line.find_first_of(" \t", start) - start);
    if (::access(interpreter.c_str(), X_OK) != 0) {
      why = "its interpreter " + interpreter + " cannot be run: " + std::strerror(errno);
      return false;
    }
    return true;
  }
  if (native_binary(head, n) || other_formats_registered()) return true;
  why = "it is neither a program (an executable binary) nor a script starting with #!";
  return false;
}

}  // namespace fc::harness
