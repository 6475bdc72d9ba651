// The guardian: a tiny process forked when a run starts, in a session of its own and deaf to
// SIGINT/SIGTERM/SIGHUP, that waits for forkcheck to end. When forkcheck ends in any way, even by
// SIGKILL, it kills whatever the run started that is still alive: every process whose
// environment carries the run's token (children inherit it, also across setsid) and every
// process group the run created. So nothing a run started outlives it. On Windows the job object
// each child runs in is killed when forkcheck's handle to it closes, which does this job
// (guardian_win32.cc).
#pragma once

#include <string>

#include "harness/platform/process_id.h"

namespace fc::harness {

// The run's token, "fc-<pid>-<random>": each supervised child gets FORKCHECK_RUN=<token>.
const std::string& run_token();
inline constexpr const char* kRunTokenVar = "FORKCHECK_RUN";

// Starts the guardian once per forkcheck process (later calls do nothing).
void start_guardian();
// Tells the guardian about a process group to kill should forkcheck die.
void guardian_track_group(ProcessId pgid);

}  // namespace fc::harness
