// The channel's one platform-specific part: where a line goes (channel_posix.cc: the file
// descriptor FORKCHECK_CHANNEL_FD names; channel_win32.cc: the inherited pipe HANDLE whose value
// it holds). channel.cc formats the lines.
#pragma once

#include <cstddef>

namespace fc::channel::detail {

// True when FORKCHECK_CHANNEL_FD names a channel (read once per process).
bool channel_open();

// Writes one line (with its newline) in as few writes as the OS allows, to the channel or,
// without one, to stderr; gives up silently when the reader is gone. Safe in the child of a
// multi-threaded fork: no allocation, no locks.
void write_line(const char* buf, std::size_t len);

}  // namespace fc::channel::detail
