// What the harness reads about processes, on Windows (no /proc).
//   cpu_ticks          GetProcessTimes, in its 100 ns units: the watchdog only asks whether the
//                      count moved, so the unit does not matter.
//   group_members      a process group on Windows (CREATE_NEW_PROCESS_GROUP) is its leader and
//                      the descendants it started: the live descendants of `pgid`, found through
//                      parent ids in a Toolhelp snapshot. The supervisor itself asks its job
//                      object instead, which no process can leave.
//   processes_with_env, started_with_env  nothing: another process's environment can only be read
//   from its PEB
//                      (NtQueryInformationProcess and ReadProcessMemory, an undocumented layout),
//                      and the job object already holds every process a run started.
#include <map>
#include <vector>

#include "harness/platform/process_info.h"
#include "harness/platform/win32.h"

// Toolhelp's header needs <windows.h> first; win32.h is the one place that includes it.
#include <tlhelp32.h>

namespace fc::harness {
namespace {

using win32::Handle;

Handle open_process(ProcessId pid) {
  return Handle(::OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE, FALSE,
                              static_cast<DWORD>(pid)));
}

bool running(const Handle& process) {
  return ::WaitForSingleObject(process.get(), 0) == WAIT_TIMEOUT;
}

uint64_t to_u64(const FILETIME& t) {
  return (static_cast<uint64_t>(t.dwHighDateTime) << 32) | t.dwLowDateTime;
}

// When `pid` started, in FILETIME units; 0 when it is gone or cannot be asked.
uint64_t creation_time(ProcessId pid) {
  Handle p = open_process(pid);
  FILETIME created, exited, kernel, user;
  if (!p || !running(p) || !::GetProcessTimes(p.get(), &created, &exited, &kernel, &user)) return 0;
  return to_u64(created);
}

}  // namespace

std::optional<uint64_t> cpu_ticks(ProcessId pid) {
  Handle p = open_process(pid);
  FILETIME created, exited, kernel, user;
  if (!p || !running(p) || !::GetProcessTimes(p.get(), &created, &exited, &kernel, &user))
    return std::nullopt;
  return to_u64(kernel) + to_u64(user);
}

std::vector<ProcessId> group_members(ProcessId pgid) {
  std::vector<ProcessId> members;
  const uint64_t leader_started = creation_time(pgid);
  if (leader_started == 0) return members;
  members.push_back(pgid);
  Handle snapshot(::CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0));
  if (!snapshot) return members;
  std::multimap<ProcessId, ProcessId> children;  // parent -> child
  PROCESSENTRY32W e{};
  e.dwSize = sizeof e;
  for (BOOL ok = ::Process32FirstW(snapshot.get(), &e); ok;
       ok = ::Process32NextW(snapshot.get(), &e))
    children.emplace(static_cast<ProcessId>(e.th32ParentProcessID),
                     static_cast<ProcessId>(e.th32ProcessID));
  // Parent ids are never updated and get reused: a "child" that started before its parent is
  // some older process whose parent had that id.
  std::vector<std::pair<ProcessId, uint64_t>> todo = {{pgid, leader_started}};
  while (!todo.empty()) {
    auto [parent, parent_started] = todo.back();
    todo.pop_back();
    auto range = children.equal_range(parent);
    for (auto it = range.first; it != range.second; ++it) {
      const uint64_t started = creation_time(it->second);
      if (started == 0 || started < parent_started || it->second == parent) continue;
      members.push_back(it->second);
      todo.emplace_back(it->second, started);
    }
  }
  return members;
}

std::vector<ProcessId> processes_with_env(const std::string&, const std::string&) { return {}; }

bool started_with_env(ProcessId, const std::string&, const std::string&) { return false; }

std::vector<ProcessId> descendants_with_env(ProcessId, const std::string&, const std::string&) {
  return {};
}

// forkcheck attach is Linux's: nothing reads another process's arguments here.
std::vector<std::string> process_command_line(ProcessId) { return {}; }

}  // namespace fc::harness
