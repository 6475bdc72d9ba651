// The zygote: a repro program that has loaded everything (libtorch's half-second of static
// initialisation included), has run nothing and has one thread, and forks a fresh copy of
// itself for each command the harness sends. Each copy is the process a fresh exec would have
// made, at the cost of a fork: the harness runs every case variant this way on Linux (see
// harness/supervise/zygote.h), unless the variant sets environment variables that libraries read
// when they load (those are exec'd).
//
// Protocol on the socket FORKCHECK_ZYGOTE_FD names (SOCK_STREAM; every message is a 4-byte
// length, host order, then that much JSON):
//   zygote -> harness, once:  {"ready": true, "threads": N, "pid": P}
//   harness -> zygote:        {"argv": [...], "env": {...}, "fds": ["out", "err", "chan"?]}
//                             with those fds attached (SCM_RIGHTS) to the first byte
//   zygote -> harness:        {"pid": P} or {"error": "..."}
// The command's process is a grandchild of the zygote whose parent exits at once, so it is
// re-parented to the harness (a child subreaper), which reaps it like any child of its own.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace fc {

// Serves until the harness closes the socket; returns the exit status for main(). `run` runs
// one command line (argv without the program name) in the forked copy.
int serve_zygote(const char* argv0, const std::function<int(const std::vector<std::string>&)>& run);

}  // namespace fc
