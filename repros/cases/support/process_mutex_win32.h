// The cross-process mutex of shared_memory.h on Windows: a lock word in the segment holding the
// pid of the process that has it, 0 when free. A Windows mutex cannot live in a mapping, and a
// named one would be one more name to hand to every worker (shared_lock_win32.cc).
#pragma once

#include <atomic>
#include <cstdint>

namespace fc::cases {

struct ProcessMutex {
  std::atomic<std::uint32_t> owner;  // a Windows process id, 0 when free
};
static_assert(std::atomic<std::uint32_t>::is_always_lock_free,
              "the lock word must work across processes");

}  // namespace fc::cases
