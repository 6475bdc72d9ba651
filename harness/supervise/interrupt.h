// SIGINT, SIGTERM and SIGHUP to forkcheck end the run within seconds: the handler only records
// the signal and wakes the supervisor's poll loop, which kills what runs and lets the run write
// a partial report.
#pragma once

#include <vector>

namespace fc::harness {

// What forkcheck's children start with (supervisor.h): the signal dispositions forkcheck itself
// was started with, recorded before it changes any. First thing in main(); later calls do
// nothing; install_interrupt_handlers() and ignore_sigpipe() call it first too.
void record_inherited_signals();
// The signals that were ignored (SIG_IGN) when forkcheck started, as recorded. Windows: none.
std::vector<int> inherited_ignored_signals();
// forkcheck ignores SIGPIPE: a closed stdout (`forkcheck all | head -1`) or a dead guardian fails
// a write, never ends the run. Its children get the disposition forkcheck inherited back.
void ignore_sigpipe();

void install_interrupt_handlers();
// The signal that interrupted the run, or 0.
int interrupted();
// Exit status for an interrupted run: 128 + the signal, as a shell reports it (130 for SIGINT).
inline int interrupted_exit_status() { return 128 + interrupted(); }

}  // namespace fc::harness
