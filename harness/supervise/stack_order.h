// The order of a stack taking (policy; supervisor_posix.cc does it). The Python processes whose
// bootstrap listens are asked for their stacks first, in ways that cannot harm them
// (python_stacks_ask.h), and nothing is stopped. A process's debugger starts only once its ask
// is over, so that it never holds a thread the ask waits for; every other process's debugger
// starts when the taking begins.
#pragma once

#include "harness/platform/process_id.h"

namespace fc::harness {

// Whether the debugger of `target` starts now: when the taking begins (`ask_over` 0), for a
// process not being asked; when the ask of `ask_over` is over, for that process.
inline bool debugger_starts(ProcessId target, ProcessId ask_over, bool target_being_asked) {
  if (ask_over != 0) return target == ask_over;
  return !target_being_asked;
}

}  // namespace fc::harness
