// process_tree.h on Windows: a Toolhelp snapshot for parents, GetProcessTimes for start and CPU
// time (100 ns units, turned into nanoseconds, under thread id 0). Windows has no process groups
// or sessions in the POSIX sense: pgid and sid are 0. Parent ids are never updated and get
// reused: a "child" that started before its parent is some older process, and is left out.
#include <cstdint>

#include "launch/process_tree.h"
#include "launch/win32.h"

// Toolhelp's header needs <windows.h> first; win32.h is the one place that includes it.
#include <tlhelp32.h>

namespace fc::launch {
namespace {

using win32::Handle;

std::uint64_t to_u64(const FILETIME& t) {
  return (static_cast<std::uint64_t>(t.dwHighDateTime) << 32) | t.dwLowDateTime;
}

struct Times {
  std::uint64_t created = 0, cpu_100ns = 0;
  bool running = false;
};

std::optional<Times> times_of(ProcessId pid) {
  Handle p(::OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE, FALSE,
                         static_cast<DWORD>(pid)));
  FILETIME created, exited, kernel, user;
  if (!p || !::GetProcessTimes(p.get(), &created, &exited, &kernel, &user)) return std::nullopt;
  return Times{to_u64(created), to_u64(kernel) + to_u64(user),
               ::WaitForSingleObject(p.get(), 0) == WAIT_TIMEOUT};
}

// Every process's parent, from one snapshot.
template <typename F>
void for_each_process(F f) {
  Handle snapshot(::CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0));
  if (!snapshot) return;
  PROCESSENTRY32W e{};
  e.dwSize = sizeof e;
  for (BOOL ok = ::Process32FirstW(snapshot.get(), &e); ok;
       ok = ::Process32NextW(snapshot.get(), &e))
    f(static_cast<ProcessId>(e.th32ProcessID), static_cast<ProcessId>(e.th32ParentProcessID));
}

}  // namespace

std::optional<ProcessFacts> process_facts(ProcessId pid) {
  auto t = times_of(pid);
  if (!t) return std::nullopt;
  ProcessFacts p;
  p.pid = pid;
  p.start_time = t->created;
  p.state = t->running ? 'R' : 'Z';
  for_each_process([&](ProcessId id, ProcessId parent) {
    if (id == pid) p.ppid = parent;
  });
  return p;
}

std::vector<ProcessId> child_processes(ProcessId pid) {
  std::vector<ProcessId> out;
  auto parent = times_of(pid);
  if (!parent) return out;
  for_each_process([&](ProcessId id, ProcessId ppid) {
    if (ppid != pid || id == pid) return;
    auto t = times_of(id);
    if (t && t->created >= parent->created) out.push_back(id);
  });
  return out;
}

// Windows: asked per process (trees looked at here are a pool's workers, a process or two each).
std::optional<std::multimap<ProcessId, ProcessId>> all_children() { return std::nullopt; }

std::map<int, ThreadFacts> thread_facts(ProcessId pid) {
  auto t = times_of(pid);
  if (!t) return {};
  ThreadFacts f;
  f.cpu_ns = t->cpu_100ns * 100;  // the state is not known ('?')
  return {{0, f}};
}

std::optional<ThreadWait> thread_wait(ProcessId, int) { return std::nullopt; }

}  // namespace fc::launch
