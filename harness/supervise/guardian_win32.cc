// No guardian process on Windows: the kernel does its work. Every supervised child runs in a job
// object created with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE (supervisor_win32.cc), and forkcheck
// holds the only handle to it (it is not inheritable). When forkcheck ends in any way, killed by
// TerminateProcess included, the kernel closes that handle and kills every process in the job,
// which is what the POSIX guardian does by hand when forkcheck is SIGKILLed.
#include <random>
#include <string>

#include "harness/platform/win32.h"
#include "harness/supervise/guardian.h"

namespace fc::harness {

const std::string& run_token() {
  static const std::string token = [] {
    std::random_device rd;
    return "fc-" + std::to_string(::GetCurrentProcessId()) + "-" + std::to_string(rd());
  }();
  return token;
}

void start_guardian() { (void)run_token(); }
void guardian_track(ProcessId, std::uint64_t, bool) {}
void guardian_forget(ProcessId, std::uint64_t) {}
void stop_guardian() {}

// No helper processes on Windows (no guardian, no zygote): nothing is one.
void note_helper_process(ProcessId) {}
bool is_helper_process(ProcessId) { return false; }

}  // namespace fc::harness
