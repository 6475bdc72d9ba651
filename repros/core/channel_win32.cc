// The channel on Windows: FORKCHECK_CHANNEL_FD holds the decimal value of an inherited pipe
// HANDLE (harness/supervise/supervisor_win32.cc). Spawned workers write to it too, so the handle is
// handed on to every worker spawn starts (launch::inherit_in_spawned_workers), before any can
// start. See channel_io.h.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "core/channel_io.h"
#include "launch/process.h"
#include "launch/win32.h"

namespace fc::channel::detail {
namespace {

HANDLE channel_handle() {
  static const HANDLE h = [] {
    const char* s = std::getenv("FORKCHECK_CHANNEL_FD");
    if (s == nullptr || *s == '\0') return HANDLE(nullptr);
    char* end = nullptr;
    const unsigned long long v = std::strtoull(s, &end, 10);
    DWORD flags = 0;
    HANDLE handle = reinterpret_cast<HANDLE>(static_cast<std::uintptr_t>(v));
    // A value that names no handle of ours (a stray variable) is no channel.
    if (end == s || *end != '\0' || v == 0 || !::GetHandleInformation(handle, &flags))
      return HANDLE(nullptr);
    launch::inherit_in_spawned_workers(static_cast<std::uintptr_t>(v));
    return handle;
  }();
  return h;
}

// At start-up, so that the handle is registered before main() can spawn a worker.
[[maybe_unused]] const bool g_registered = channel_handle() != nullptr;

}  // namespace

bool channel_open() { return channel_handle() != nullptr; }

void write_line(const char* buf, std::size_t len) {
  HANDLE h = channel_handle();
  if (h == nullptr) {
    std::fwrite(buf, 1, len, stderr);
    std::fflush(stderr);
    return;
  }
  while (len > 0) {
    DWORD n = 0;
    const DWORD chunk = len > (1u << 20) ? (1u << 20) : static_cast<DWORD>(len);
    if (!::WriteFile(h, buf, chunk, &n, nullptr) || n == 0) return;  // the harness is gone
    buf += n;
    len -= n;
  }
}

}  // namespace fc::channel::detail
