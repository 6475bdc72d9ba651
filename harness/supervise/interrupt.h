// SIGINT, SIGTERM and SIGHUP to forkcheck end the run within seconds: the handler only records
// the signal and wakes the supervisor's poll loop, which kills what runs and lets the run write
// a partial report.
#pragma once

#include "harness/base/exit_status_codes.h"

namespace fc::harness {

void install_interrupt_handlers();
// The signal that interrupted the run, or 0.
int interrupted();

// Ctrl-Z (SIGTSTP) asks forkcheck to stop: the supervisor stops the trees it runs, then itself
// (stop_now), and continues them when it is continued. Whether a stop was asked since the last
// stop_now(); Windows: never.
bool stop_requested();
// Stops forkcheck as SIGTSTP's default would (the shell sees it stopped); returns once it is
// continued (fg, bg, SIGCONT).
void stop_now();
// Exit status for an interrupted run: 128 + the signal, as a shell reports it (130 for SIGINT).
inline int interrupted_exit_status() { return exit_status::interrupted_by(interrupted()); }

}  // namespace fc::harness
