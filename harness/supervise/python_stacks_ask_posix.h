// The mechanism under PythonStacksAsk (python_stacks_ask.h) on POSIX: what the kernel says of one
// Python process's threads, and sending the signals the ask decides on. Linux reads /proc and
// signals one thread (tgkill); elsewhere no thread of another process can be signalled, so only
// the stacks signal goes, to the process, and its main thread answers at its next bytecode.
#pragma once

#include <string>
#include <vector>

#include "harness/platform/process_id.h"
#include "harness/stacks/stacks.h"
#include "harness/supervise/python_channel.h"
#include "harness/supervise/python_stacks_ask.h"

namespace fc::harness {

// A look at `pid` for its ask: its threads' states and our pending signals, whether it catches
// our two signals, then (after the threads were seen, so that a dump whose thread was back asleep
// is read whole) what its connections hold.
PythonStacksAsk::Look look_for_ask(ProcessId pid, const PythonStacksAsk::Offer& offer,
                                   PythonChannel& channel, PythonStacksAsk::Clock::time_point now);

// Sends what the ask decided on `look`. A thread's own signal goes only if, read again just
// before, the thread is still asleep with the context switches `look` saw (kWoke otherwise): what
// remains of the risk is a wake in the microseconds between that read and the signal.
PythonStacksAsk::Sent send_for_ask(ProcessId pid, const PythonStacksAsk::Act& act,
                                   const PythonStacksAsk::Look& look);

// What the ask got, as a dump of the process's threads (each with its OS id where known), and a
// line per thread it could not read.
PyDump dump_of_ask(const PythonStacksAsk& ask, const PythonChannel& channel, ProcessId pid);
std::vector<std::string> unread_of_ask(const PythonStacksAsk& ask, const PythonChannel& channel,
                                       ProcessId pid);

}  // namespace fc::harness
