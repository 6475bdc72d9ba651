// graceful-shutdown's view of a worker on macOS, which has no /proc: the kernel's process table
// through sysctl (kinfo_proc: the ignored and caught signal sets, the state), as ps reads it.
// See termination.h.
#include <signal.h>
#include <sys/proc.h>
#include <sys/sysctl.h>
#include <sys/types.h>

#include <optional>
#include <string>

#include "cases/support/termination.h"

namespace fc::cases::termination {
namespace {

std::optional<kinfo_proc> process_info(launch::ProcessId pid) {
  int mib[4] = {CTL_KERN, KERN_PROC, KERN_PROC_PID, static_cast<int>(pid)};
  kinfo_proc info{};
  size_t size = sizeof info;
  // A pid no process has is a success with nothing returned.
  if (::sysctl(mib, 4, &info, &size, nullptr, 0) != 0 || size == 0) return std::nullopt;
  return info;
}

}  // namespace

std::string sigterm_disposition(launch::ProcessId pid) {
  const auto info = process_info(pid);
  if (!info || info->kp_proc.p_stat == SZOMB) return "";
  const unsigned bit = 1u << (SIGTERM - 1);  // sigmask(SIGTERM), which strict modes hide
  if (static_cast<unsigned>(info->kp_proc.p_sigignore) & bit) return "ignored";
  if (static_cast<unsigned>(info->kp_proc.p_sigcatch) & bit) return "caught";
  return "default";
}

std::string process_state(launch::ProcessId pid) {
  const auto info = process_info(pid);
  if (!info) return "";
  switch (info->kp_proc.p_stat) {
    case SIDL:
      return "I (being created)";
    case SRUN:
      return "R (runnable)";
    case SSLEEP:
      return "S (sleeping)";
    case SSTOP:
      return "T (stopped)";
    case SZOMB:
      return "Z (zombie)";
    default:
      return "? (state " + std::to_string(static_cast<int>(info->kp_proc.p_stat)) + ")";
  }
}

const char* process_table() { return "the process table (sysctl)"; }

}  // namespace fc::cases::termination
