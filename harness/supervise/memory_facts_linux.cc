// Linux: /proc/PID/smaps_rollup, /proc/PID/cgroup, the memory cgroups' OOM counters, /proc/vmstat
// and /dev/kmsg (memory_watch.h).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "harness/supervise/memory_watch.h"

namespace fc::harness {
namespace {

// "Name:   1234 kB" lines of smaps_rollup, in KiB; false for another line.
bool kib_of(const std::string& line, const char* name, std::uint64_t& out) {
  const std::string key = std::string(name) + ":";
  if (line.compare(0, key.size(), key) != 0) return false;
  out = std::strtoull(line.c_str() + key.size(), nullptr, 10);
  return true;
}

// The value of `key N` in a file of such lines (memory.events, memory.oom_control, vmstat).
long long counter(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string k;
  long long v = 0;
  while (in >> k >> v)
    if (k == key) return v;
  return -1;
}

}  // namespace

bool read_memory(int pid, MemorySample& out) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/smaps_rollup");
  if (!in) return false;
  std::string line;
  std::uint64_t clean = 0, dirty = 0, v = 0;
  bool any = false;
  while (std::getline(in, line)) {
    if (kib_of(line, "Rss", v))
      out.rss_kib = v, any = true;
    else if (kib_of(line, "Pss", v))
      out.pss_kib = v;
    else if (kib_of(line, "Private_Clean", v))
      clean = v;
    else if (kib_of(line, "Private_Dirty", v))
      dirty = v;
  }
  out.private_kib = clean + dirty;
  return any;
}

std::string memory_cgroup_of(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  std::string line, v2;
  while (std::getline(in, line)) {
    // "4:memory:/path" (v1, the memory controller) or "0::/path" (v2).
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (controllers == "memory" || controllers.find("memory,") == 0 ||
        controllers.find(",memory") != std::string::npos)
      return "v1:" + path;
    if (line.compare(0, 3, "0::") == 0) v2 = "v2:" + path;
  }
  return v2;
}

long long cgroup_oom_kills(const std::string& cgroup) {
  if (cgroup.compare(0, 3, "v1:") == 0)
    return counter("/sys/fs/cgroup/memory" + cgroup.substr(3) + "/memory.oom_control", "oom_kill");
  if (cgroup.compare(0, 3, "v2:") == 0)
    for (const char* root : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
      const long long n = counter(root + cgroup.substr(3) + "/memory.events", "oom_kill");
      if (n >= 0) return n;
    }
  return -1;
}

long long system_oom_kills() { return counter("/proc/vmstat", "oom_kill"); }

KernelLog::KernelLog() {
  fd_ = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ >= 0 && ::lseek(fd_, 0, SEEK_END) < 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

KernelLog::~KernelLog() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<std::pair<int, std::string>> KernelLog::oom_kills() {
  std::vector<std::pair<int, std::string>> out;
  if (fd_ < 0) return out;
  // "Out of memory: Killed process 1234 (python3) total-vm:..." and "Memory cgroup out of
  // memory: Killed process 1234 (python3) ...": one record per read.
  static const std::regex killed(R"(Killed process (\d+) \(([^)]*)\))");
  char record[8192];
  for (;;) {
    const ssize_t n = ::read(fd_, record, sizeof record - 1);
    if (n < 0 && errno == EPIPE) continue;  // records overwritten meanwhile: read on
    if (n <= 0) break;
    const std::string text(record, static_cast<size_t>(n));
    const auto semi = text.find(';');  // "level,seq,usec,flags;message"
    const std::string message =
        semi == std::string::npos ? text : text.substr(semi + 1, text.find('\n', semi) - semi - 1);
    std::smatch m;
    if (std::regex_search(message, m, killed)) out.emplace_back(std::stoi(m[1]), message);
  }
  return out;
}

}  // namespace fc::harness
