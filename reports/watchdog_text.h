// The watchdog's facts in words, phrased here once for the terminal (live notes, the closing
// finding), the run log's message and every report: why time was called on a child and what
// ending it took, what its process tree was doing then, a process that can never go on, what the
// rest of its tree did, starvation. Each fact is said in one of these, never in two.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "reports/model/report_model.h"

namespace fc::reports {

// "pid 7926 [python3] can never go on by itself: its one thread has waited on a futex private to
// it, with no timeout, for 4.0 s (nothing but a signal could wake it)"; `pause`: it waits in
// pause() with no signal handler ("... nothing but its death ends that").
std::string stuck_process_text(int pid, const std::string& name, std::size_t threads,
                               double stuck_s, bool pause = false);

// "the rest of the tree kept working (98% of a CPU)", "... was not still, though it used under 1%
// of a CPU (...)", or "the rest of the tree was still too"
std::string rest_of_tree_text(bool still, double cpu_share);

// "runnable but waiting for a CPU for 8.1 s: the machine is overloaded (load average 20.3 on 2
// CPUs)"; the load left out when unknown (load_average < 0).
std::string starved_text(double starved_s, double load_average, unsigned cpus);

// A thread asleep in a wait that ends by itself, from a "sleep" record (watchdog_record.h):
// "pid 41 [python3] sleeps in clock_nanosleep, a wait that ends by itself in 2.3 s" ("within
// 8.0 s" where only its length is known, "a wait with a timeout" where not even that).
std::string sleeping_text(const Sleep& sleep);

// Why forkcheck called time on a child it then ended, from the variant's "watchdog" and "hang"
// records: "blocked when its 5.0 s deadline passed: the whole tree had been still for 3.9 s",
// "pid 12 entered \"join\" and did not come back within 2.0 s, the whole tree blocked for 1.0 s
// (called after 2.5 s)", "still working when its 2.0 s deadline passed: a timeout, not a hang".
// What the tree was doing then (CPU, processes, threads, waits) is tree_facts()'s to say.
std::string time_called_text(const Watchdog& watchdog, const std::optional<StepHang>& hang);

// A watch of a running process forkcheck did not start (forkcheck attach), from the variant's
// "watchdog" and "hang" records, whose "attached" record says how the watch ended:
// "pid 812 ended while watched, 4.1 s in; its exit status went to its parent, pid 40, which
// forkcheck cannot read", "the whole tree had been still for 10.2 s, past the 10.0 s a stall may
// last (--hang-after) (called after 11.3 s); left running as it was: forkcheck attach ends
// nothing it did not start (--kill-on-hang does)", "still working when the 30.0 s watch ended
// (--timeout): no hang seen; left running". `hang`: whether the watch found it hung (a hang by the
// same rule exec's outcome follows); "" for a variant that was not attached.
std::string attached_text(const Watchdog& watchdog, const std::optional<StepHang>& hang, bool hung);

// What ending it took: "; SIGTERM ended it", "; SIGTERM was not enough, SIGKILL ended it" (on
// Windows, Ctrl-Break and its job object); "" when nothing was sent.
std::string escalation_text(const Watchdog& watchdog);

// What the report must not hide: "; still alive after every SIGKILL: pid 7", "; pid 9 joined its
// process group from outside its tree and was spared (...)"; "" when neither.
std::string survivors_text(const Watchdog& watchdog);

// For a child that ended by itself after time was called, before forkcheck signalled it:
// " (its 5.0 s deadline had passed, but it ended by itself 0.2 s later, before forkcheck
// signalled it: the outcome is that of its own end)"; "" otherwise.
std::string ended_by_itself_text(const Watchdog& watchdog);

// A child dead of a signal just after forkcheck signalled it to look at it (watchdog
// "died_after_look"): "killed by SIGSEGV (Segmentation fault) 120 ms after forkcheck asked one of
// its threads for its stack: forkcheck may have caused it, so it is not said to be the program's
// own crash"; "" when there is no such record.
std::string died_after_look_text(const Watchdog& watchdog);

// What the supervisor saw of a variant's process tree (its watchdog's tree record; `outcome`, the
// variant's, says whether a working tree was seen at a deadline), in one line, the same in every
// format: "blocked for 3.2 s: 0.4 ms of CPU in the last 1.0 s, 3 processes, 7
// threads waiting in futex (5), wait4 (2)", "still working at the deadline: 812 ms of CPU in the
// last 1.0 s, 2 processes, 5 threads; in running (1), futex (4)". "" when the variant has no
// such record.
std::string tree_facts(const Watchdog& watchdog, const std::string& outcome);

}  // namespace fc::reports
