// cow-refcount-growth's platform part: how much of this process's memory is its own. Linux reads
// /proc/self/smaps_rollup (private_memory_linux.cc): a page a fork child still shares with its
// parent counts as Shared_*, and turns into the child's Private_Dirty the moment the child writes
// it (copy-on-write), so a worker's Private_Dirty growth is what it copied. Elsewhere there is no
// reading here and every variant is skipped, saying why (private_memory_other.cc).
#pragma once

#include <string>

namespace fc::cases::private_memory {

// Why this process's private memory cannot be read here; "" where it can.
std::string unavailable_reason();

// This process's memory now, in KiB (-1 where unknown).
struct Reading {
  long long private_dirty_kib = -1;  // pages this process alone maps and has written
  long long shared_dirty_kib = -1;   // written pages it maps with another process
  long long rss_kib = -1;
};
Reading read_self();

// The size of a page of memory, in bytes (0 where unknown).
long page_bytes();

}  // namespace fc::cases::private_memory
