// What the torch cases' shared state needs on Windows: one clock, and no clean-up at termination.
// The harness ends a variant's processes with its job object (TerminateJobObject), which runs no
// code in them, so nothing could be removed then. A segment needs nothing: a named file mapping
// goes with the last handle to it, and the kill closes every handle. A registered file stays
// behind after a kill (only selfplay-pipeline registers files: its scratch directory, left in the
// temp directory when a variant of it is ended at its deadline).
// See shared_memory.h.
#include "cases/support/shared_memory.h"
#include "launch/win32.h"  // <windows.h>, lean: a unity batch may hold Winsock too

namespace fc::cases {

void remove_on_termination(const std::string&) {}

void remove_segment_on_termination(const std::string&) {}

double monotonic_s() {
  // The performance counter is one counter for the whole machine, as CLOCK_MONOTONIC is.
  LARGE_INTEGER now{}, frequency{};
  ::QueryPerformanceCounter(&now);
  ::QueryPerformanceFrequency(&frequency);
  return static_cast<double>(now.QuadPart) / static_cast<double>(frequency.QuadPart);
}

}  // namespace fc::cases
