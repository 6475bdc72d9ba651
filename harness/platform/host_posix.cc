#include <limits.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>
#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif
#ifdef __linux__
#include <sched.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness/platform/host.h"

extern char** environ;  // macOS's <unistd.h> does not declare it

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
  return {{"os", u.sysname},
          {"kernel", u.release},
          {"machine", u.machine},
          {"cpus", ::sysconf(_SC_NPROCESSORS_ONLN)}};
}

// PATH searched here, not with Boost.Process: its search reads the environment through
// std::locale(""), which throws where the user's locale (LANG, LC_ALL) is not installed, as in
// many containers.
std::string find_in_path(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos) return "";
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";  // execvp's default
  for (std::size_t from = 0;;) {
    const std::size_t colon = dirs.find(':', from);
    std::string dir = dirs.substr(from, colon == std::string::npos ? colon : colon - from);
    if (dir.empty()) dir = ".";  // POSIX: an empty entry is the working directory
    std::string candidate = dir + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    if (colon == std::string::npos) return "";
    from = colon + 1;
  }
}

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
    for (std::uint32_t m :
         {0xfeedfaceu, 0xfeedfacfu, 0xcefaedfeu, 0xcffaedfeu, 0xcafebabeu, 0xbebafecau})
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
  why = "it is neither an executable binary nor a script starting with #!";
  return false;
}

namespace {

// The CPUs this process may run on (its affinity mask), or null where the OS has no such mask.
nlohmann::json affinity_cpus() {
#ifdef __linux__
  // A mask as large as the kernel's: CPU_SETSIZE (1024) is too small on the largest machines.
  for (int n = 1024; n <= (1 << 20); n *= 2) {
    cpu_set_t* set = CPU_ALLOC(static_cast<size_t>(n));
    if (set == nullptr) break;
    const size_t size = CPU_ALLOC_SIZE(static_cast<size_t>(n));
    CPU_ZERO_S(size, set);
    if (::sched_getaffinity(0, size, set) == 0) {
      const int count = CPU_COUNT_S(size, set);
      CPU_FREE(set);
      return count;
    }
    CPU_FREE(set);
    if (errno != EINVAL) break;
  }
#endif
  return nullptr;
}

// cgroup v2's cpu.max of this process's cgroup ("150000 100000": 1.5 CPUs), or null when there is
// no quota ("max ...") or no cgroup v2 to ask.
nlohmann::json cgroup_cpu_quota() {
#ifdef __linux__
  std::ifstream cgroup("/proc/self/cgroup");
  std::string line, path;
  while (std::getline(cgroup, line))
    if (line.rfind("0::", 0) == 0) path = line.substr(3);
  if (path.empty()) return nullptr;
  for (const std::string& file :
       {"/sys/fs/cgroup" + path + "/cpu.max", std::string("/sys/fs/cgroup/cpu.max")}) {
    std::ifstream in(file);
    std::string quota;
    double period = 0;
    if (!(in >> quota >> period)) continue;
    if (quota == "max" || period <= 0) return nullptr;
    char* end = nullptr;
    const double q = std::strtod(quota.c_str(), &end);
    if (end == quota.c_str() || q <= 0) return nullptr;
    return q / period;
  }
#endif
  return nullptr;
}

}  // namespace

nlohmann::json machine_limits() {
  nlohmann::json facts = nlohmann::json::object();
  utsname u{};
  facts["os"] = ::uname(&u) == 0 ? nlohmann::json(u.sysname) : nlohmann::json(nullptr);
  const char* shm = "/dev/shm";
  struct statvfs vfs {};
  if (::statvfs(shm, &vfs) == 0) {
    const auto unit = static_cast<std::uint64_t>(vfs.f_frsize ? vfs.f_frsize : vfs.f_bsize);
    facts["dev_shm"] = {{"path", shm},
                        {"size_bytes", static_cast<std::uint64_t>(vfs.f_blocks) * unit},
                        {"free_bytes", static_cast<std::uint64_t>(vfs.f_bavail) * unit}};
  } else {
    facts["dev_shm"] = {{"path", shm}, {"absent", std::strerror(errno)}};
  }
  rlimit nofile{};
  if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
    auto limit = [](rlim_t v) -> nlohmann::json {
      if (v == RLIM_INFINITY) return "unlimited";
      return static_cast<std::uint64_t>(v);
    };
    facts["open_files"] = {{"soft", limit(nofile.rlim_cur)}, {"hard", limit(nofile.rlim_max)}};
  } else {
    facts["open_files"] = {{"soft", nullptr}, {"hard", nullptr}};
  }
  facts["cpus"] = {{"online", ::sysconf(_SC_NPROCESSORS_ONLN)},
                   {"affinity", affinity_cpus()},
                   {"cgroup_quota", cgroup_cpu_quota()}};
  return facts;
}

double load_average() {
  double one = -1;
  return ::getloadavg(&one, 1) == 1 ? one : -1;
}

unsigned cpu_count() {
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<unsigned>(n) : 1;
}

std::vector<std::pair<std::string, std::string>> environment_variables() {
  std::vector<std::pair<std::string, std::string>> vars;
  for (char** e = ::environ; e && *e; ++e) {
    const std::string entry = *e;
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    vars.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return vars;
}

}  // namespace fc::harness

namespace fc::harness {

bool is_terminal(int stream) { return ::isatty(stream == 1 ? STDOUT_FILENO : STDERR_FILENO) == 1; }

std::size_t write_what_fits(int stream, const char* data, std::size_t n) {
  const int fd = stream == 1 ? STDOUT_FILENO : STDERR_FILENO;
  std::size_t done = 0;
  while (done < n) {
    // Writable: a pipe has room for PIPE_BUF bytes at least, so a write of that much returns at
    // once; a terminal likewise takes a chunk. O_NONBLOCK is not set: the descriptor is shared
    // with the shell and other programs.
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, 0) != 1 || !(p.revents & POLLOUT)) break;
    const std::size_t chunk = std::min<std::size_t>(n - done, PIPE_BUF);
    const ssize_t w = ::write(fd, data + done, chunk);
    if (w <= 0) break;
    done += static_cast<std::size_t>(w);
  }
  return done;
}

}  // namespace fc::harness
