// The wait chain of a stopped tree (report.json's `wait_chain`, harness/supervise/wait_graph.h)
// in words, with each waiting thread's Python line from the stacks: the first line of the
// finding where there is one.
#pragma once

#include <string>

#include "reports/model/report_model.h"

namespace fc::reports {

// "pid 41 waits in wait4 for its child pid 57 to end (train.py:18 in main); pid 57's main thread
// waits ... ; pid 57's thread QueueFeederThread waits to write 964 KiB to a pipe whose read end
// only pids 41 and 57 hold (connection.py:367 in _send): a deadlock across 2 processes (...)".
// "" when the variant has no chain (time was not called, or the program's process waited on no
// other).
std::string wait_chain_text(const Variant& variant);

}  // namespace fc::reports
