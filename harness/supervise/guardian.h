// The guardian: a tiny process forked when a run starts, in a session of its own and deaf to
// SIGINT/SIGTERM/SIGHUP/SIGPIPE, that waits for forkcheck to end (its pidfd, or EOF). When
// forkcheck ends in any way, even by SIGKILL, it kills whatever the run started that is still
// alive: every process of a supervised tree forkcheck told it about (held by a pidfd, or by pid
// and start time), each child's process group while the child is unreaped (until then the group's
// id cannot be reused), and every process whose environment carries the run's token (children
// inherit it, also across setsid), round after round until a round finds nothing. forkcheck tells
// it to forget a process that ended, and a child just before reaping it, so the guardian never
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
// A process of a supervised tree: the child the run started (`group_leader`: its group is killed
// too, while the child is unreaped), or any process found in its tree (a daemon without the run
// token is found this way).
void guardian_track(ProcessId pid, std::uint64_t start_time, bool group_leader);
// That process ended, or is about to be reaped: forgotten before its pid can be reused.
// `start_time` 0: whichever process of that pid the guardian holds.
void guardian_forget(ProcessId pid, std::uint64_t start_time = 0);
// forkcheck is about to exit: the guardian sweeps (nothing is left when all went well) and is
// waited for, so that it does not outlive forkcheck either.
void stop_guardian();

// forkcheck's own helper processes (the guardian, the zygotes): children of ours that belong to
// no supervised tree.
void note_helper_process(ProcessId pid);
bool is_helper_process(ProcessId pid);

}  // namespace fc::harness
