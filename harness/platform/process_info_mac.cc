// What the harness reads about processes, on macOS (no /proc): libproc and sysctl.
//   cpu_ticks          proc_pidinfo(PROC_PIDTASKINFO): pti_total_user + pti_total_system, in
//                      Mach time units (nanoseconds on Intel, not on Apple silicon). The watchdog
//                      only asks whether the count moved, so the unit does not matter.
//   group_members      proc_listpids(PROC_PGRP_ONLY), zombies left out (PROC_PIDTBSDINFO).
//   processes_with_env the initial environment of each process, from sysctl KERN_PROCARGS2.
// A process that is gone, or that we may not look at (EPERM: another user's, or protected), is
// skipped: the ones the harness looks for are its own user's.
#include <libproc.h>
#include <sys/proc.h>  // SZOMB
#include <sys/proc_info.h>
#include <sys/sysctl.h>
#include <sys/types.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "harness/platform/process_info.h"

namespace fc::harness {
namespace {

// proc_listpids of `type` (PROC_ALL_PIDS, PROC_PGRP_ONLY, ...). It answers in bytes; a buffer it
// filled to the brim may have been too small for processes started meanwhile: ask again, larger.
std::vector<pid_t> list_pids(uint32_t type, uint32_t typeinfo) {
  int bytes = ::proc_listpids(type, typeinfo, nullptr, 0);  // the size needed now, with room
  std::vector<pid_t> pids;
  for (int attempt = 0; bytes > 0 && attempt < 4; ++attempt) {
    pids.assign(static_cast<size_t>(bytes) / sizeof(pid_t) + 32, 0);
    const int size = static_cast<int>(pids.size() * sizeof(pid_t));
    const int got = ::proc_listpids(type, typeinfo, pids.data(), size);
    if (got <= 0) break;
    if (got < size) {
      pids.resize(static_cast<size_t>(got) / sizeof(pid_t));
      pids.erase(std::remove_if(pids.begin(), pids.end(), [](pid_t p) { return p <= 0; }),
                 pids.end());  // pid 0 is the kernel
      return pids;
    }
    bytes = size * 2;
  }
  return {};
}

// Alive and not a zombie. PROC_PIDTBSDINFO with arg 0 does not look for zombies; one that is
// found while it becomes one says so in pbi_status.
bool live(pid_t pid) {
  proc_bsdinfo info{};
  const int n = ::proc_pidinfo(pid, PROC_PIDTBSDINFO, 0, &info, sizeof info);
  return n == static_cast<int>(sizeof info) && info.pbi_status != SZOMB;
}

// The environment `pid` was started with. KERN_PROCARGS2 gives: int argc, the executable's path,
// NUL padding, argc argument strings, then the environment strings, each NUL-terminated, up to
// an empty one or the end. `buf` is reused from one process to the next.
std::vector<std::string> initial_environment(pid_t pid, std::vector<char>& buf) {
  if (buf.empty()) {  // KERN_ARGMAX bytes hold any process's arguments and environment
    int mib[2] = {CTL_KERN, KERN_ARGMAX};
    int argmax = 0;
    size_t len = sizeof argmax;
    const bool known = ::sysctl(mib, 2, &argmax, &len, nullptr, 0) == 0 && argmax > 0;
    buf.resize(known ? static_cast<size_t>(argmax) : size_t{1} << 20);
  }
  int mib[3] = {CTL_KERN, KERN_PROCARGS2, pid};
  size_t len = buf.size();
  if (::sysctl(mib, 3, buf.data(), &len, nullptr, 0) != 0 || len < sizeof(int)) return {};
  int argc = 0;
  std::memcpy(&argc, buf.data(), sizeof argc);
  const char* p = buf.data() + sizeof argc;
  const char* const end = buf.data() + len;
  auto next_string = [&]() -> std::string {  // the string at p; p moves past its NUL
    const char* nul = std::find(p, end, '\0');
    std::string s(p, nul);
    p = nul == end ? end : nul + 1;
    return s;
  };
  next_string();                      // the executable's path
  while (p < end && *p == '\0') ++p;  // its padding
  for (int i = 0; i < argc && p < end; ++i) next_string();
  std::vector<std::string> env;
  while (p < end) {
    std::string s = next_string();
    if (s.empty()) break;
    env.push_back(std::move(s));
  }
  return env;
}

}  // namespace

std::optional<uint64_t> cpu_ticks(pid_t pid) {
  if (!live(pid)) return std::nullopt;
  proc_taskinfo info{};
  if (::proc_pidinfo(pid, PROC_PIDTASKINFO, 0, &info, sizeof info) != static_cast<int>(sizeof info))
    return std::nullopt;  // gone meanwhile, or not ours to look at
  return info.pti_total_user + info.pti_total_system;
}

std::vector<pid_t> group_members(pid_t pgid) {
  std::vector<pid_t> pids;
  for (pid_t p : list_pids(PROC_PGRP_ONLY, static_cast<uint32_t>(pgid)))
    if (live(p)) pids.push_back(p);
  return pids;
}

bool started_with_env(pid_t pid, const std::string& name, const std::string& value) {
  const std::string exact = name + "=" + value, prefix = exact + "-";
  std::vector<char> buf;
  for (const auto& var : initial_environment(pid, buf))
    if (var == exact || var.compare(0, prefix.size(), prefix) == 0) return true;
  return false;
}

// macOS has no subreaper: a descendant's orphan goes to launchd, out of reach of a walk down
// from forkcheck. Every process is looked at.
std::vector<pid_t> descendants_with_env(pid_t, const std::string& name, const std::string& value) {
  return processes_with_env(name, value);
}

std::vector<pid_t> processes_with_env(const std::string& name, const std::string& value) {
  std::vector<pid_t> pids;
  const std::string exact = name + "=" + value, prefix = exact + "-";
  std::vector<char> buf;
  for (pid_t p : list_pids(PROC_ALL_PIDS, 0)) {
    if (!live(p)) continue;
    for (const auto& var : initial_environment(p, buf)) {
      if (var == exact || var.compare(0, prefix.size(), prefix) == 0) {
        pids.push_back(p);
        break;
      }
    }
  }
  return pids;
}

// forkcheck attach is Linux's: nothing reads another process's arguments here.
std::vector<std::string> process_command_line(pid_t) { return {}; }

}  // namespace fc::harness
