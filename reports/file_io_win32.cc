// Reports' file I/O on Windows: wide paths throughout; every file created with CREATE_NEW (fails
// when anything, a symlink included, is at the name: nothing is written through a link someone
// else placed); a temporary file beside the target, FlushFileBuffers, then
// MoveFileExW(MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH), which replaces the file in one
// step on the same volume. See file_io.h.
#include <io.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>

#include "launch/win32.h"
#include "reports/file_io.h"
#include "reports/reporter.h"

namespace fc::reports {
namespace {

namespace win32 = launch::win32;

std::string utf8(const std::filesystem::path& p) { return p.u8string(); }

}  // namespace

namespace file_io {

std::FILE* create_new_for_writing(const std::filesystem::path& path, std::string& error) {
  // Shared for reading and writing as fopen() shares a file (readers may follow the log), and not
  // inheritable (no SECURITY_ATTRIBUTES): child processes never hold it.
  win32::Handle h(::CreateFileW(path.c_str(), GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE,
                                nullptr, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, nullptr));
  if (!h) {
    error = win32::error_text(::GetLastError());
    return nullptr;
  }
  // The C runtime takes the handle over: fclose() closes it. Flags 0: binary (no _O_TEXT), no
  // append; the _O_ names live in <fcntl.h>, which ci/check-win32-cross.sh keeps out of Windows
  // code as a POSIX header.
  const int fd = ::_open_osfhandle(reinterpret_cast<intptr_t>(h.get()), 0);
  if (fd < 0) {
    error = "_open_osfhandle failed";
    return nullptr;
  }
  h.release();
  std::FILE* f = ::_fdopen(fd, "wb");
  if (f == nullptr) {
    error = "_fdopen failed";
    ::_close(fd);
  }
  return f;
}

}  // namespace file_io

void write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  auto fail = [&](const std::string& what, DWORD code) {
    throw std::runtime_error("cannot write " + utf8(path) + ": " + what + ": " +
                             win32::error_text(code));
  };
  // The temporary is PATH.tmp.PID.N with the first N free: CREATE_NEW makes the name ours alone
  // (two writers, a stale temporary, a planted symlink: each is passed over).
  const std::wstring prefix =
      path.wstring() + L".tmp." + std::to_wstring(::GetCurrentProcessId()) + L".";
  std::filesystem::path tmp;
  win32::Handle h;
  DWORD create_error = ERROR_FILE_EXISTS;
  for (int n = 0; !h && create_error == ERROR_FILE_EXISTS && n < 100; ++n) {
    tmp = prefix + std::to_wstring(n);
    h.reset(::CreateFileW(tmp.c_str(), GENERIC_WRITE, 0, nullptr, CREATE_NEW, FILE_ATTRIBUTE_NORMAL,
                          nullptr));
    if (!h) create_error = ::GetLastError();
  }
  if (!h) fail("create " + utf8(tmp), create_error);
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    const DWORD chunk = left > (1u << 30) ? (1u << 30) : static_cast<DWORD>(left);
    DWORD n = 0;
    if (!::WriteFile(h.get(), p, chunk, &n, nullptr)) {
      const DWORD code = ::GetLastError();
      h.reset();
      ::DeleteFileW(tmp.c_str());
      fail("write", code);
    }
    p += n;
    left -= n;
  }
  if (!::FlushFileBuffers(h.get())) {
    const DWORD code = ::GetLastError();
    h.reset();
    ::DeleteFileW(tmp.c_str());
    fail("flush", code);
  }
  h.reset();
  if (!::MoveFileExW(tmp.c_str(), path.c_str(),
                     MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) {
    const DWORD code = ::GetLastError();
    ::DeleteFileW(tmp.c_str());
    fail("rename", code);
  }
}

}  // namespace fc::reports
