// process_tree.h on macOS: libproc. CPU time is the process's total (proc_pidinfo's task info,
// in Mach time units, turned into nanoseconds), under thread id 0.
#include <libproc.h>
#include <mach/mach_time.h>
#include <sys/proc.h>  // SZOMB, SSTOP, ...
#include <sys/proc_info.h>

#include <algorithm>

#include "launch/process_tree.h"

namespace fc::launch {
namespace {

char state_letter(uint32_t status) {
  switch (status) {
    case SRUN:
      return 'R';
    case SSLEEP:
      return 'S';
    case SSTOP:
      return 'T';
    case SZOMB:
      return 'Z';
    default:
      return '?';
  }
}

}  // namespace

std::optional<ProcessFacts> process_facts(ProcessId pid) {
  proc_bsdinfo info{};
  if (::proc_pidinfo(pid, PROC_PIDTBSDINFO, 0, &info, sizeof info) != static_cast<int>(sizeof info))
    return std::nullopt;
  ProcessFacts p;
  p.pid = pid;
  p.ppid = static_cast<ProcessId>(info.pbi_ppid);
  p.pgid = static_cast<ProcessId>(info.pbi_pgid);
  p.sid = 0;  // libproc does not say; getsid() would
  p.start_time = info.pbi_start_tvsec * 1000000u + info.pbi_start_tvusec;
  p.state = state_letter(info.pbi_status);
  return p;
}

std::vector<ProcessId> child_processes(ProcessId pid) {
  // It answers in pids; a buffer filled to the brim may have been too small: ask again, larger.
  std::vector<pid_t> pids(64);
  for (int attempt = 0; attempt < 6; ++attempt) {
    const int n =
        ::proc_listchildpids(pid, pids.data(), static_cast<int>(pids.size() * sizeof(pid_t)));
    if (n < 0) return {};
    if (static_cast<size_t>(n) < pids.size()) {
      pids.resize(static_cast<size_t>(n));
      pids.erase(std::remove_if(pids.begin(), pids.end(), [](pid_t p) { return p <= 0; }),
                 pids.end());
      return {pids.begin(), pids.end()};
    }
    pids.resize(pids.size() * 4);
  }
  return {};
}

std::optional<std::multimap<ProcessId, ProcessId>> all_children() { return std::nullopt; }

std::map<int, ThreadFacts> thread_facts(ProcessId pid) {
  proc_taskinfo info{};
  if (::proc_pidinfo(pid, PROC_PIDTASKINFO, 0, &info, sizeof info) != static_cast<int>(sizeof info))
    return {};
  static const mach_timebase_info_data_t base = [] {
    mach_timebase_info_data_t b{1, 1};
    if (::mach_timebase_info(&b) != KERN_SUCCESS || b.denom == 0) b = {1, 1};
    return b;
  }();
  const std::uint64_t ticks = info.pti_total_user + info.pti_total_system;
  ThreadFacts t;
  t.cpu_ns = ticks / base.denom * base.numer + ticks % base.denom * base.numer / base.denom;
  t.state = info.pti_numrunning > 0 ? 'R' : 'S';  // runnable threads, running or not
  return {{0, t}};
}

std::optional<ThreadWait> thread_wait(ProcessId, int) { return std::nullopt; }

}  // namespace fc::launch
