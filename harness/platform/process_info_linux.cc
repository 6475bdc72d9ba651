#include <dirent.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "harness/platform/process_info.h"
#include "launch/process_tree.h"

namespace fc::harness {
namespace {

struct Stat {
  char state = '?';
  long pgrp = 0;
  uint64_t utime = 0, stime = 0;
};

// /proc/PID/stat: the command name is in parentheses and may hold spaces; fields follow the last
// ')'.
std::optional<Stat> read_stat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!in || !std::getline(in, text)) return std::nullopt;
  auto close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(text.substr(close + 2));
  Stat s;
  long ppid, session, tty, tpgid;
  unsigned long flags, minflt, cminflt, majflt, cmajflt;
  rest >> s.state >> ppid >> s.pgrp >> session >> tty >> tpgid >> flags >> minflt >> cminflt >>
      majflt >> cmajflt >> s.utime >> s.stime;
  if (!rest) return std::nullopt;
  return s;
}

// Calls f(pid) for every process /proc lists.
template <typename F>
void for_each_pid(F f) {
  DIR* d = ::opendir("/proc");
  if (!d) return;
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid > 0 && *end == '\0') f(static_cast<pid_t>(pid));
  }
  ::closedir(d);
}

}  // namespace

std::optional<uint64_t> cpu_ticks(pid_t pid) {
  auto f = launch::process_facts(pid);
  auto s = read_stat(pid);
  if (!f || f->zombie() || !s) return std::nullopt;
  return s->utime + s->stime;
}

std::vector<pid_t> group_members(pid_t pgid) {
  std::vector<pid_t> pids;
  for_each_pid([&](pid_t pid) {
    auto f = launch::process_facts(pid);
    if (f && f->pgid == pgid && !f->zombie()) pids.push_back(pid);
  });
  return pids;
}

bool started_with_env(pid_t pid, const std::string& name, const std::string& value) {
  const std::string exact = name + "=" + value, prefix = exact + "-";
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string var;
  while (std::getline(in, var, '\0'))
    if (var == exact || var.compare(0, prefix.size(), prefix) == 0) return true;
  return false;
}

std::vector<pid_t> processes_with_env(const std::string& name, const std::string& value) {
  std::vector<pid_t> pids;
  for_each_pid([&](pid_t pid) {
    auto f = launch::process_facts(pid);
    if (f && !f->zombie() && started_with_env(pid, name, value)) pids.push_back(pid);
  });
  return pids;
}

std::vector<pid_t> descendants_with_env(pid_t ancestor, const std::string& name,
                                        const std::string& value) {
  std::vector<pid_t> found, todo = {ancestor};
  std::set<pid_t> seen;
  const auto table = launch::all_children();  // one /proc pass, where per process would be one each
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    std::vector<launch::ProcessId> children;
    if (table)
      for (auto [it, end] = table->equal_range(p); it != end; ++it) children.push_back(it->second);
    else
      children = launch::child_processes(p);
    for (launch::ProcessId c : children) {
      if (!seen.insert(c).second) continue;
      auto f = launch::process_facts(c);
      if (!f || f->ppid != p) continue;
      todo.push_back(c);
      if (!f->zombie() && started_with_env(c, name, value)) found.push_back(c);
    }
  }
  return found;
}

std::vector<std::string> process_command_line(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string arg;
  while (std::getline(in, arg, '\0')) args.push_back(arg);
  return args;
}

}  // namespace fc::harness
