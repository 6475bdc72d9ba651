// Reports' file I/O on Windows: wide paths throughout; a temporary file beside the target,
// FlushFileBuffers, then MoveFileExW(MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH), which
// replaces the file in one step on the same volume. See file_io.h.
#include <cerrno>
#include <cstdio>
#include <stdexcept>
#include <system_error>

#include "launch/win32.h"
#include "reports/file_io.h"
#include "reports/reporter.h"

namespace fc::reports {
namespace {

namespace win32 = launch::win32;

std::string utf8(const std::filesystem::path& p) { return p.u8string(); }

}  // namespace

namespace file_io {

std::FILE* create_for_writing(const std::filesystem::path& path, std::string& error) {
  // "N": the C runtime's handle is not inherited by child processes (O_NOINHERIT).
  std::FILE* f = ::_wfopen(path.c_str(), L"wbN");
  if (f == nullptr) error = std::generic_category().message(errno);
  return f;
}

}  // namespace file_io

void write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  auto fail = [&](const std::string& what, DWORD code) {
    throw std::runtime_error("cannot write " + utf8(path) + ": " + what + ": " +
                             win32::error_text(code));
  };
  std::filesystem::path tmp = path;
  tmp += L".tmp." + std::to_wstring(::GetCurrentProcessId());
  win32::Handle h(::CreateFileW(tmp.c_str(), GENERIC_WRITE, 0, nullptr, CREATE_ALWAYS,
                                FILE_ATTRIBUTE_NORMAL, nullptr));
  if (!h) fail("create", ::GetLastError());
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
