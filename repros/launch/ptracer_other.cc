// PR_SET_PTRACER for the supervisor (ptracer.h), where there is no Yama: nothing to do. macOS
// lets a debugger of the same user attach through task_for_pid and its own rules; Windows has no
// ptrace.
#include "launch/ptracer.h"

namespace fc::launch {

void allow_supervisor_ptrace() noexcept {}

int supervisor_ptracer() noexcept { return 0; }

}  // namespace fc::launch
