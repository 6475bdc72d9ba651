#include <dirent.h>
#include <unistd.h>

#include <algorithm>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "harness/stacks/stacks.h"

namespace fc::harness {
namespace {

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

// The name of the system call /proc/PID/task/TID/syscall shows a thread blocked in: its number
// (first field), for the calls a blocked thread is found in; "running" while it runs; "" for a
// thread not in a system call; "syscall N" for a number syscall_name does not name.
std::string syscall_name_in(const std::string& line) {
  if (line.empty() || line == "running") return line;
  char* end = nullptr;
  const long nr = std::strtol(line.c_str(), &end, 10);
  if (end == line.c_str() || nr < 0) return "";
  return syscall_name(nr);
}

}  // namespace

std::string syscall_name(long nr) {
  struct Named {
    long nr;
    const char* name;
  };
#if defined(__x86_64__)
  static constexpr Named kNames[] = {
      {0, "read"},
      {1, "write"},
      {7, "poll"},
      {23, "select"},
      {34, "pause"},
      {35, "nanosleep"},
      {43, "accept"},
      {42, "connect"},
      {44, "sendto"},
      {45, "recvfrom"},
      {46, "sendmsg"},
      {47, "recvmsg"},
      {61, "wait4"},
      {64, "semget"},
      {65, "semop"},
      {72, "fcntl"},
      {73, "flock"},
      {19, "readv"},
      {20, "writev"},
      {17, "pread64"},
      {130, "rt_sigsuspend"},
      {128, "rt_sigtimedwait"},
      {202, "futex"},
      {208, "io_getevents"},
      {219, "restart_syscall"},
      {220, "semtimedop"},
      {230, "clock_nanosleep"},
      {232, "epoll_wait"},
      {247, "waitid"},
      {270, "pselect6"},
      {271, "ppoll"},
      {281, "epoll_pwait"},
      {288, "accept4"},
      {16, "ioctl"},
      {257, "openat"},
      {24, "sched_yield"},
      {449, "futex_waitv"},
      {441, "epoll_pwait2"},
  };
#elif defined(__aarch64__)
  static constexpr Named kNames[] = {
      {63, "read"},
      {64, "write"},
      {73, "ppoll"},
      {72, "pselect6"},
      {101, "nanosleep"},
      {115, "clock_nanosleep"},
      {98, "futex"},
      {260, "wait4"},
      {95, "waitid"},
      {202, "accept"},
      {242, "accept4"},
      {203, "connect"},
      {206, "sendto"},
      {207, "recvfrom"},
      {211, "sendmsg"},
      {212, "recvmsg"},
      {22, "epoll_pwait"},
      {133, "rt_sigsuspend"},
      {137, "rt_sigtimedwait"},
      {32, "flock"},
      {25, "fcntl"},
      {29, "ioctl"},
      {56, "openat"},
      {193, "semop"},
      {192, "semtimedop"},
      {124, "sched_yield"},
      {449, "futex_waitv"},
      {441, "epoll_pwait2"},
  };
#else
  static constexpr Named kNames[] = {{-1, ""}};
#endif
  for (const auto& n : kNames)
    if (n.nr == nr) return n.name;
  return "syscall " + std::to_string(nr);
}

std::vector<ThreadStack> proc_threads(pid_t pid) {
  std::vector<ThreadStack> out;
  const std::string base = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = ::opendir(base.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    long tid = std::strtol(e->d_name, &end, 10);
    if (tid <= 0 || *end != '\0') continue;
    const std::string dir = base + "/" + e->d_name;
    ThreadStack t;
    t.pid = pid;
    t.tid = static_cast<int>(tid);
    t.name = first_line(dir + "/comm");
    std::string stat = first_line(dir + "/stat");
    auto close = stat.rfind(')');
    if (close != std::string::npos && close + 2 < stat.size()) t.state = stat.substr(close + 2, 1);
    t.wchan = first_line(dir + "/wchan");
    if (t.wchan == "0") t.wchan.clear();
    const std::string call = first_line(dir + "/syscall");
    t.syscall = syscall_name_in(call.substr(0, call.find(' ')));
    // The kernel stack, when readable (root): where in the kernel the thread
    // waits.
    std::ifstream kstack(dir + "/stack");
    std::string line;
    while (std::getline(kstack, line)) {
      auto sp = line.find(' ');
      t.frames.push_back({sp == std::string::npos ? line : line.substr(sp + 1), "(kernel)"});
    }
    out.push_back(std::move(t));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(),
            [](const ThreadStack& a, const ThreadStack& b) { return a.tid < b.tid; });
  return out;
}

}  // namespace fc::harness

namespace fc::harness {

// An executable named python*, or a process that maps libpython (an embedding program): either
// way its threads may run Python code.
std::string python_interpreter(ProcessId pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  char buf[4096];
  const ssize_t n = ::readlink((proc + "/exe").c_str(), buf, sizeof buf - 1);
  std::string exe = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  const std::string base = exe.substr(exe.rfind('/') + 1);
  if (base.rfind("python", 0) == 0) return exe;
  std::ifstream maps(proc + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string file = line.substr(slash);
    if (file.find("/libpython") != std::string::npos) return file;
  }
  return "";
}

}  // namespace fc::harness
