// The watchdog's facts in words, phrased here once for the terminal (live notes, the closing
// finding) and every report: a process that can never go on, what the rest of its tree did,
// starvation.
#pragma once

#include <cstddef>
#include <string>

namespace fc::reports {

// "pid 7926 [python3] can never go on by itself: its one thread has waited on a futex private to
// it, with no timeout, for 4.0 s (nothing but a signal could wake it)"; `pause`: it waits in
// pause() with no signal handler ("... nothing but its death ends that").
std::string stuck_process_text(int pid, const std::string& name, std::size_t threads,
                               double stuck_s, bool pause = false);

// "the rest of the tree kept working (98% of a CPU)", or "the rest of the tree was still too"
std::string rest_of_tree_text(bool still, double cpu_share);

// "runnable but waiting for a CPU for 8.1 s: the machine is overloaded (load average 20.3 on 2
// CPUs)"; the load left out when unknown (load_average < 0).
std::string starved_text(double starved_s, double load_average, unsigned cpus);

}  // namespace fc::reports
