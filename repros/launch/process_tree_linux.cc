// process_tree.h on Linux: /proc. Files are read with plain open/read (no iostreams): a tree is
// looked at four times a second for as long as it runs.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>

#include "launch/process_tree.h"
#include "launch/syscalls_linux.h"
#include "launch/timed_wait_linux.h"

namespace fc::launch {
namespace {

// A small /proc file (stat, schedstat, children), up to `max` bytes; empty when it cannot be
// read. Read through a buffer on the stack: a tree is looked at four times a second, and each look
// reads a few files per thread, so nothing is allocated but the result.
std::string read_small(const std::string& path, size_t max = 4096) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string out;
  char buf[4096];
  while (out.size() < max) {
    const ssize_t n = ::read(fd, buf, std::min(sizeof buf, max - out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

template <typename F>
void for_each_number_entry(const std::string& dir, F f) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (const dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long n = std::strtol(e->d_name, &end, 10);
    if (n > 0 && *end == '\0') f(static_cast<int>(n));
  }
  ::closedir(d);
}

// Fields of /proc/PID/stat after the command name (which may hold spaces and parentheses: it
// ends at the last ')'), numbered as proc(5) numbers them: state is field 3.
bool stat_fields(const std::string& text, std::vector<std::string>& fields) {
  const auto close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return false;
  fields.assign(3, std::string());  // fields 0 (none), 1 (pid) and 2 (comm) are not kept
  size_t i = close + 2;
  while (i < text.size()) {
    const size_t sp = text.find_first_of(" \n", i);
    fields.push_back(text.substr(i, sp == std::string::npos ? std::string::npos : sp - i));
    if (sp == std::string::npos) break;
    i = sp + 1;
  }
  return fields.size() > 22;  // up to starttime
}

const long kTicksPerSecond = ::sysconf(_SC_CLK_TCK) > 0 ? ::sysconf(_SC_CLK_TCK) : 100;

// /proc/PID/task/TID/children needs CONFIG_PROC_CHILDREN; without it, every process's parent is
// read instead. FORKCHECK_PROC_CHILDREN=0 takes that way here too (the tests run both).
bool have_children_files() {
  static const bool have = [] {
    const char* env = std::getenv("FORKCHECK_PROC_CHILDREN");
    if (env && std::string(env) == "0") return false;
    return ::access(("/proc/self/task/" + std::to_string(::getpid()) + "/children").c_str(),
                    R_OK) == 0;
  }();
  return have;
}

// Whether the page holding `address` in `pid` is present and private anonymous memory: its
// pagemap entry (8 bytes per page) has bit 63 (present) and not bit 61 (a file's page, or shared
// anonymous memory). False when it cannot be read.
bool private_anonymous_page(ProcessId pid, std::uint64_t address) {
  const long page = ::sysconf(_SC_PAGESIZE);
  if (page <= 0) return false;
  const int fd =
      ::open(("/proc/" + std::to_string(pid) + "/pagemap").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::uint64_t entry = 0;
  const off_t at = static_cast<off_t>(address / static_cast<std::uint64_t>(page) * sizeof entry);
  const bool read = ::pread(fd, &entry, sizeof entry, at) == static_cast<ssize_t>(sizeof entry);
  ::close(fd);
  return read && (entry >> 63 & 1) && !(entry >> 61 & 1);
}

// Whether `pid` catches no signal at all: /proc/PID/status's SigCgt is all zeros.
bool catches_no_signal(ProcessId pid) {
  const std::string status = read_small("/proc/" + std::to_string(pid) + "/status", 4096);
  const auto at = status.find("\nSigCgt:");
  if (at == std::string::npos) return false;
  const std::string mask = status.substr(at + 8, status.find('\n', at + 8) - at - 8);
  const auto digits = mask.find_first_not_of(" \t");
  return digits != std::string::npos && mask.find_first_not_of('0', digits) == std::string::npos;
}

}  // namespace

std::optional<ProcessFacts> process_facts(ProcessId pid) {
  std::vector<std::string> f;
  const std::string stat = read_small("/proc/" + std::to_string(pid) + "/stat");
  if (!stat_fields(stat, f)) return std::nullopt;
  ProcessFacts p;
  p.pid = pid;
  const auto open = stat.find('('), close = stat.rfind(')');
  if (open != std::string::npos && close > open) p.name = stat.substr(open + 1, close - open - 1);
  p.state = f[3].empty() ? '?' : f[3][0];
  p.ppid = std::atoi(f[4].c_str());
  p.pgid = std::atoi(f[5].c_str());
  p.sid = std::atoi(f[6].c_str());
  p.start_time = std::strtoull(f[22].c_str(), nullptr, 10);
  if (p.zombie()) {
    // A leader that ended by pthread_exit shows Z while its other threads run: the process is
    // alive as long as any of them is; it takes their state.
    const std::string task = "/proc/" + std::to_string(pid) + "/task";
    for_each_number_entry(task, [&](int tid) {
      std::vector<std::string> t;
      if (tid != pid && p.zombie() &&
          stat_fields(read_small(task + "/" + std::to_string(tid) + "/stat"), t) && !t[3].empty() &&
          t[3][0] != 'Z' && t[3][0] != 'X')
        p.state = t[3][0];
    });
  }
  return p;
}

std::vector<ProcessId> child_processes(ProcessId pid) {
  std::vector<ProcessId> out;
  if (have_children_files()) {
    const std::string task = "/proc/" + std::to_string(pid) + "/task";
    for_each_number_entry(task, [&](int tid) {
      const std::string text = read_small(task + "/" + std::to_string(tid) + "/children", 1 << 16);
      const char* p = text.c_str();
      char* end = nullptr;
      for (long c = std::strtol(p, &end, 10); end != p; c = std::strtol(p, &end, 10)) {
        out.push_back(static_cast<ProcessId>(c));
        p = end;
      }
    });
    return out;
  }
  // Without CONFIG_PROC_CHILDREN: every process's parent.
  std::vector<std::string> f;
  for_each_number_entry("/proc", [&](int p) {
    if (stat_fields(read_small("/proc/" + std::to_string(p) + "/stat"), f) &&
        std::atoi(f[4].c_str()) == pid)
      out.push_back(p);
  });
  return out;
}

std::optional<std::multimap<ProcessId, ProcessId>> all_children() {
  if (have_children_files()) return std::nullopt;
  std::multimap<ProcessId, ProcessId> out;
  std::vector<std::string> f;
  for_each_number_entry("/proc", [&](int p) {
    if (stat_fields(read_small("/proc/" + std::to_string(p) + "/stat"), f))
      out.emplace(std::atoi(f[4].c_str()), p);
  });
  return out;
}

std::map<int, ThreadFacts> thread_facts(ProcessId pid) {
  std::map<int, ThreadFacts> out;
  const std::string task = "/proc/" + std::to_string(pid) + "/task";
  std::vector<std::string> f;
  for_each_number_entry(task, [&](int tid) {
    const std::string dir = task + "/" + std::to_string(tid);
    if (!stat_fields(read_small(dir + "/stat"), f)) return;  // gone meanwhile
    ThreadFacts t;
    t.state = f[3].empty() ? '?' : f[3][0];
    // schedstat: nanoseconds on a CPU, nanoseconds waiting on a run queue, timeslices
    // (CONFIG_SCHED_INFO); stat's utime and stime are clock ticks (10 ms), too coarse to tell a
    // poller from a worker: the fallback, with no run-queue wait known.
    const std::string s = read_small(dir + "/schedstat", 128);
    if (!s.empty() && s[0] >= '0' && s[0] <= '9') {
      char* end = nullptr;
      t.cpu_ns = std::strtoull(s.c_str(), &end, 10);
      t.run_delay_ns = std::strtoull(end, nullptr, 10);
      t.run_delay_known = true;
    } else {
      t.cpu_ns =
          (std::strtoull(f[14].c_str(), nullptr, 10) + std::strtoull(f[15].c_str(), nullptr, 10)) *
          (1000000000ull / static_cast<std::uint64_t>(kTicksPerSecond));
    }
    out[tid] = t;
  });
  return out;
}

std::optional<ThreadWait> thread_wait(ProcessId pid, int tid) {
  // "NR ARG1 ... ARG6 SP PC" while blocked in a system call; "running", or "-1 SP PC" outside one.
  const std::string text =
      read_small("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/syscall", 256);
  if (text.empty() || !(text[0] >= '0' && text[0] <= '9')) return std::nullopt;
  const char* p = text.c_str();
  char* end = nullptr;
  ThreadWait w;
  w.syscall = std::strtol(p, &end, 10);
  std::uint64_t arg[6] = {};
  for (auto& a : arg) {
    p = end;
    a = std::strtoull(p, &end, 16);
    if (end == p) return w;  // no arguments shown
  }
  std::copy(std::begin(arg), std::end(arg), w.args.begin());
  w.args_known = true;
  const std::string wchan =
      w.syscall == sys::kRestart
          ? read_small("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/wchan",
                       128)
          : "";
  if (wchan.find("poll") != std::string::npos) w.resumed = sys::kPoll;
  read_timed_wait(pid, w.syscall, arg, wchan, w);
  if (w.syscall == sys::kPause || w.syscall == sys::kSigsuspend) {
    w.ended_by_any_signal = true;
    w.pause_without_handler = catches_no_signal(pid);
    return w;
  }
  // futex(uaddr, op, val, timeout, uaddr2, val3): a wait with a NULL timeout waits for ever.
  if (w.syscall == sys::kFutex && sys::futex_waits(arg[1]) && arg[3] == 0 &&
      ((arg[1] & FUTEX_PRIVATE_FLAG) != 0 || private_anonymous_page(pid, arg[0]))) {
    w.untimed_private_futex = true;
    w.futex_word = arg[0];
  }
  return w;
}

}  // namespace fc::launch
