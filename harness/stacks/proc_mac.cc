// What macOS says about each thread of a process, through libproc (it has no /proc): the name
// and the run state. No wait channel and no kernel stack: libproc does not give them.
#include <libproc.h>
#include <sys/param.h>  // MAXCOMLEN
#include <sys/proc_info.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "harness/stacks/stacks.h"

namespace fc::harness {
namespace {

// Mach's run states as the letters Linux uses (R running, T stopped, S waiting, D in an
// uninterruptible wait); a halted thread is one being terminated, Linux's X.
std::string state_letter(int32_t run_state) {
  switch (run_state) {
    case TH_STATE_RUNNING:
      return "R";
    case TH_STATE_STOPPED:
      return "T";
    case TH_STATE_WAITING:
      return "S";
    case TH_STATE_UNINTERRUPTIBLE:
      return "D";
    case TH_STATE_HALTED:
      return "X";
    default:
      return "?";
  }
}

// The handles of `pid`'s threads (PROC_PIDLISTTHREADS answers in bytes, 8 per thread); the
// thread count from PROC_PIDTASKINFO sizes the buffer, with room for threads started meanwhile.
std::vector<uint64_t> thread_handles(pid_t pid) {
  proc_taskinfo task{};
  if (::proc_pidinfo(pid, PROC_PIDTASKINFO, 0, &task, sizeof task) != static_cast<int>(sizeof task))
    return {};  // gone, a zombie, or not ours to look at
  std::vector<uint64_t> handles(
      static_cast<size_t>(task.pti_threadnum > 0 ? task.pti_threadnum : 0) + 16);
  const int bytes = ::proc_pidinfo(pid, PROC_PIDLISTTHREADS, 0, handles.data(),
                                   static_cast<int>(handles.size() * sizeof(uint64_t)));
  handles.resize(bytes > 0 ? static_cast<size_t>(bytes) / sizeof(uint64_t) : 0);
  return handles;
}

}  // namespace

std::string syscall_name(long nr) { return "syscall " + std::to_string(nr); }

// macOS has no small thread id to show here: a thread's tid is its place in the kernel's list,
// from 1. A thread without a name of its own goes by its process's, as on Linux.
std::vector<ThreadStack> proc_threads(pid_t pid) {
  std::vector<ThreadStack> out;
  char process_name[2 * MAXCOMLEN + 1] = {};
  if (::proc_name(pid, process_name, sizeof process_name) <= 0) process_name[0] = '\0';
  int position = 0;
  for (uint64_t handle : thread_handles(pid)) {
    ++position;
    proc_threadinfo info{};
    if (::proc_pidinfo(pid, PROC_PIDTHREADINFO, handle, &info, sizeof info) !=
        static_cast<int>(sizeof info))
      continue;  // it ended meanwhile
    ThreadStack t;
    t.pid = pid;
    t.tid = position;
    t.name = std::string(info.pth_name, ::strnlen(info.pth_name, sizeof info.pth_name));
    if (t.name.empty()) t.name = process_name;
    t.state = state_letter(info.pth_run_state);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace fc::harness

namespace fc::harness {

// macOS: no frames are taken there (no lldb driver), so no Python frames either.
std::string python_interpreter(ProcessId) { return ""; }

}  // namespace fc::harness
