// forkcheck's own process: what it was started with, recorded before it changes anything, and the
// few things it changes for itself. Its children get what it inherited back (supervisor.h): the
// signal dispositions (not its own ignored SIGPIPE) and the descriptor limit (not its raised one).
#pragma once

#include <cstdint>
#include <vector>

namespace fc::harness {

// Records the signal dispositions and the descriptor limit this process was started with. First
// thing in main(); later calls do nothing; everything below calls it first too.
void record_inherited_signals();
// The signals that were ignored (SIG_IGN) when forkcheck started, as recorded. Windows: none.
std::vector<int> inherited_ignored_signals();
// forkcheck ignores SIGPIPE: a closed stdout (`forkcheck all | head -1`) or a dead guardian fails
// a write, never ends the run.
void ignore_sigpipe();
// Started with stdin, stdout or stderr closed, the next pipe or socket would take that number,
// and a stray write to it would corrupt the supervisor's plumbing: /dev/null takes the place.
void open_closed_stdio();
// The soft descriptor limit, raised to the hard one: a tree of thousands of processes is held
// by a pidfd each.
void raise_descriptor_limit();
// The soft descriptor limit forkcheck was started with (0: unknown, or nothing to restore).
std::uint64_t inherited_descriptor_limit();

}  // namespace fc::harness
