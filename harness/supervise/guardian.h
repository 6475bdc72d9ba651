// The guardian: a tiny process forked when a run starts, in a session of its own and deaf to
// SIGINT/SIGTERM/SIGHUP/SIGPIPE, that waits for forkcheck to end. When forkcheck ends in any way,
// even by SIGKILL, it kills whatever the run started that is still alive: each child forkcheck
// told it about (held by the pidfd forkcheck passed it, or by pid and start time), that child's
// process group while the child is unreaped (until then the group's id cannot be reused), and
// every process whose environment carries the run's token (children inherit it, also across
// setsid). forkcheck tells it to forget a child just before reaping it, so the guardian never
// signals a group whose id may have been reused. So nothing a run started outlives it, and
// nothing else is touched. On Windows the job object each child runs in is killed when
// forkcheck's handle to it closes, which does this job (guardian_win32.cc).
#pragma once

#include <cstdint>
#include <string>

#include "harness/platform/process_id.h"

namespace fc::harness {

// The run's token, "fc-<pid>-<random>": each supervised child gets FORKCHECK_RUN=<token>-<n>.
const std::string& run_token();
inline constexpr const char* kRunTokenVar = "FORKCHECK_RUN";

// Starts the guardian once per forkcheck process (later calls do nothing). Should the guardian
// die, forkcheck goes on (it ignores SIGPIPE) and says once on stderr that it is unguarded.
void start_guardian();
// A child the run started, leader of its own process group, not yet reaped.
void guardian_track(ProcessId pid, std::uint64_t start_time);
// That child is about to be reaped: forgotten before its pid can be reused.
void guardian_forget(ProcessId pid);
// forkcheck is about to exit: the guardian sweeps (nothing is left when all went well) and is
// waited for, so that it does not outlive forkcheck either.
void stop_guardian();

// forkcheck's own helper processes (the guardian, the zygotes): children of ours that belong to
// no supervised tree.
void note_helper_process(ProcessId pid);
bool is_helper_process(ProcessId pid);

}  // namespace fc::harness
