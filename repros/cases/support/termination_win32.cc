// graceful-shutdown on Windows: there is no SIGTERM. Terminating a process is TerminateProcess,
// which the process can neither handle nor ignore (Python's terminate() and kill() are the same
// call there), so the escalation the case shows does not exist, and its variants are skipped.
// See termination.h.
#include <stdexcept>

#include "cases/support/termination.h"

namespace fc::cases::termination {
namespace {

constexpr const char* kNoSigterm =
    "Windows has no SIGTERM: terminate() is TerminateProcess, which a process can neither handle "
    "nor ignore, so there is no graceful request to escalate from";

}  // namespace

int kill_signal() { return 0; }

const char* unavailable_reason() { return kNoSigterm; }

void ignore_and_wait_forever() { throw std::logic_error(kNoSigterm); }

void wait_for_termination_request() { throw std::logic_error(kNoSigterm); }

std::string sigterm_disposition(launch::ProcessId) { return ""; }

std::string process_state(launch::ProcessId) { return ""; }

const char* process_table() { return "the process list"; }

}  // namespace fc::cases::termination
