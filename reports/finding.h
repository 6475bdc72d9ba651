// The key finding of a run, the same in every place that leads with it (the terminal's closing
// summary, issue.md, the top of report.html and summary.md): one headline, a few facts, the one
// fix that matters. Built from the report alone, from what the run established: a fix is named
// only where the run showed its reason (libgomp in a stuck stack, a hazardous fork, a fix
// variant that was ok).
#pragma once

#include <string>
#include <vector>

#include "reports/model/report_model.h"

namespace fc::reports {

struct Finding {
  bool bad = false;                // something failed: red where colour is shown
  std::string headline;            // one line
  std::vector<std::string> facts;  // a few short lines (where a stuck program waits, ...)
  std::string fix;                 // the one fix that matters; "" when the run shows none
};

Finding key_finding(const Report& report);

// The fix one run of a user's program shows (exec, watch, or one start method under matrix), as
// the key finding words it; "" when the run shows none. junit.xml puts it in the failure.
std::string subject_fix(const Case& c, const Variant& v);

// Where each process of a stuck tree waits, a line per thread worth showing, at most `max`:
// "pid 12 python3: train.py:13 in main" (Python frames), else the first native frames.
std::vector<std::string> where_it_waits(const std::vector<Thread>& stacks, size_t max);

// What kind of wait a stuck process (the watchdog's "stuck" record) is in, as a catalog case's
// `shows_as` names it without its "stuck:" prefix: "pause" (pause() with no handler), "lock" (one
// thread on a lock no other thread can release), "locks" (its threads on each other's locks).
std::string stuck_kind(const StuckProcess& stuck);

// Whether any frame of `stacks` is in libgomp (GNU OpenMP).
bool stuck_in_libgomp(const std::vector<Thread>& stacks);

}  // namespace fc::reports
