// What graceful-shutdown needs of the OS: a worker that ignores termination requests or handles
// them, and, from the parent, how a worker will treat SIGTERM and whether it is still there.
// POSIX signals: termination_posix.cc (the workers), termination_linux.cc (/proc/PID/status),
// termination_mac.cc (sysctl's kinfo_proc). Windows has no SIGTERM (termination_win32.cc): a
// terminate there is TerminateProcess, which no process can handle or ignore, so the case's
// variants are skipped with unavailable_reason().
#pragma once

#include <string>

#include <forkcheck/launch.h>

namespace fc::cases::termination {

// Why a process cannot choose what a termination request does to it here; nullptr where it can.
const char* unavailable_reason();

// The worker that never looks at its signals: SIGTERM ignored, then waits forever.
[[noreturn]] void ignore_and_wait_forever();
// The worker that exits cleanly on SIGTERM: returns once it arrived.
void wait_for_termination_request();

// How `pid` will treat SIGTERM: "ignored", "caught", "default"; "" when it is gone (or the OS
// will not say).
std::string sigterm_disposition(launch::ProcessId pid);
// Its state as the OS lists it ("S (sleeping)", "Z (zombie)"); "" when no process has that id.
std::string process_state(launch::ProcessId pid);
// The signal that ends a worker which ignored the request (SIGKILL); 0 where there is none.
int kill_signal();
// Where process_state() looks, for the report ("/proc", "the process table (sysctl)").
const char* process_table();

}  // namespace fc::cases::termination
