// Win32 for the harness: <windows.h> comes in through launch/win32.h, the one place forkcheck
// includes it, with the helpers both sides use; here, what only the harness needs.
#pragma once

#include "launch/win32.h"

namespace fc::harness::win32 {

using fc::launch::win32::append_argument;
using fc::launch::win32::error_text;
using fc::launch::win32::Handle;
using fc::launch::win32::narrow;
using fc::launch::win32::widen;

// The event that wakes the supervisor's wait early (reaper_win32.cc): set by the console control
// handler, as SIGCHLD and SIGINT write to the self-pipe on POSIX.
HANDLE wake_event();

}  // namespace fc::harness::win32
