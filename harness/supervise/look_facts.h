// What a look at a tree tells the watchdog (LookFacts), worked out the same way whatever looked:
// which processes are alive, which of them sleep through (every thread asleep, no CPU since the
// look before), and where a thread asleep until its process's own alarm goes among the sleepers.
#pragma once

#include <vector>

#include "harness/supervise/sleeping_threads.h"
#include "harness/supervise/watchdog.h"
#include "launch/process_tree.h"

namespace fc::harness {

// `f.processes`, `f.pids` and `f.asleep` from the look before (`before`) and this one (`after`).
// A zombie is not alive; a process the look before did not see, or with no thread read, is not
// known to be asleep.
void count_processes(const launch::TreeLook& before, const launch::TreeLook& after, LookFacts& f);

// `t` among `sleeping`, which stay first to wake first (an unknown end last; among equal ends,
// after those already there).
void add_sleeper(std::vector<SleepingThread>& sleeping, SleepingThread t);

}  // namespace fc::harness
