// A process id, as the supervisor records it on every platform. POSIX's pid_t is an int on Linux
// and macOS (reaper_posix.cc checks); a Windows process id is a DWORD, but Windows hands out
// small multiples of 4, far below 2^31, so an int holds it too. One type keeps the shared headers
// free of <sys/types.h> and <windows.h>, and the reports the same everywhere.
#pragma once

namespace fc::harness {

using ProcessId = int;

}  // namespace fc::harness
