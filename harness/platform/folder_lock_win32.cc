// LockFileEx on the folder's lock file: Windows releases a process's locks when it ends. The
// locked byte lies far past the holder's pid, which the file holds at its start, so a second
// run can read who holds it (Windows would refuse to read a locked range).
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <system_error>

#include "harness/platform/folder_lock.h"
#include "harness/platform/win32.h"

namespace fc::harness {
namespace {

namespace fs = std::filesystem;

// The handles of the lock files this process holds, by folder, open until it exits.
std::map<std::string, HANDLE>& held_locks() {
  static std::map<std::string, HANDLE> held;
  return held;
}

OVERLAPPED far_byte() {
  OVERLAPPED o{};
  o.Offset = 0;
  o.OffsetHigh = 1;  // byte 2^32: never part of the pid text
  return o;
}

ProcessId pid_in(HANDLE file) {
  char text[32] = {};
  DWORD n = 0;
  OVERLAPPED at_start{};
  if (!::ReadFile(file, text, sizeof text - 1, &n, &at_start)) return 0;
  return static_cast<ProcessId>(std::strtol(text, nullptr, 10));
}

}  // namespace

FolderLock lock_folder(const fs::path& dir) {
  using Result = FolderLock::Result;
  FolderLock out;
  const std::string key = folder_lock_key(dir);
  if (held_locks().count(key) != 0) {
    out.result = Result::kHeld;
    return out;
  }
  const fs::path file = dir / kFolderLockFileName;
  // Not inherited by children (no security attributes): only this process holds it.
  HANDLE h = ::CreateFileW(file.wstring().c_str(), GENERIC_READ | GENERIC_WRITE,
                           FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                           OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (h == INVALID_HANDLE_VALUE) {
    out.why = "cannot create " + file.string() + ": " + win32::error_text(::GetLastError());
    return out;
  }
  OVERLAPPED at = far_byte();
  if (::LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &at)) {
    const std::string pid = std::to_string(::GetCurrentProcessId()) + "\r\n";
    DWORD n = 0;
    OVERLAPPED at_start{};
    ::WriteFile(h, pid.data(), static_cast<DWORD>(pid.size()), &n, &at_start);
    ::SetFilePointer(h, static_cast<LONG>(pid.size()), nullptr, FILE_BEGIN);
    ::SetEndOfFile(h);
    held_locks()[key] = h;
    out.result = Result::kHeld;
    return out;
  }
  const DWORD err = ::GetLastError();
  if (err == ERROR_LOCK_VIOLATION || err == ERROR_IO_PENDING) {
    out.result = Result::kBusy;
    out.holder = pid_in(h);
  } else {
    out.result = Result::kUnsupported;
    out.why = "cannot lock " + file.string() + ": " + win32::error_text(err);
  }
  ::CloseHandle(h);
  return out;
}

}  // namespace fc::harness
