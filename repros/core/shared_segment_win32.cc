// SharedSegment on Windows: a named file mapping backed by the paging file, in the session's
// namespace ("Local\forkcheck-..."). A name cannot be removed while a process maps it: unlink()
// closes the creator's handle, and the name goes with the last view. See shared_segment.h.
#include <atomic>
#include <stdexcept>

#include "core/shared_segment.h"
#include "launch/process.h"
#include "launch/win32.h"

namespace fc {
namespace {

namespace win32 = launch::win32;

// "/forkcheck-x-1-0" (the POSIX spelling the payloads carry) -> L"Local\\forkcheck-x-1-0".
std::wstring object_name(const std::string& name) {
  return L"Local\\" + win32::widen(name.rfind('/', 0) == 0 ? name.substr(1) : name);
}

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what + ": " + win32::error_text(::GetLastError()));
}

void* map_view(HANDLE mapping, std::size_t bytes, const std::string& name) {
  void* p = ::MapViewOfFile(mapping, FILE_MAP_ALL_ACCESS, 0, 0, bytes);
  if (p == nullptr) fail("MapViewOfFile " + name);
  return p;
}

std::uintptr_t as_value(HANDLE h) { return reinterpret_cast<std::uintptr_t>(h); }
HANDLE as_handle(std::uintptr_t v) { return reinterpret_cast<HANDLE>(v); }

}  // namespace

SharedSegment::SharedSegment(std::string name, void* data, std::size_t size,
                             launch::ProcessId creator, std::uintptr_t handle)
    : name_(std::move(name)), data_(data), size_(size), creator_(creator), handle_(handle) {}

SharedSegment::SharedSegment(SharedSegment&& o) noexcept
    : name_(std::move(o.name_)),
      data_(o.data_),
      size_(o.size_),
      creator_(o.creator_),
      handle_(o.handle_),
      unlinked_(o.unlinked_) {
  o.data_ = nullptr;
  o.creator_ = -1;
  o.handle_ = 0;
}

SharedSegment SharedSegment::create(const std::string& prefix, std::size_t bytes) {
  static std::atomic<int> counter{0};
  const launch::ProcessId self = launch::current_process_id();
  std::string name =
      "/forkcheck-" + prefix + "-" + std::to_string(self) + "-" + std::to_string(counter++);
  const unsigned long long size = bytes;
  // New pages of a paging-file mapping read as zeros.
  win32::Handle mapping(::CreateFileMappingW(
      INVALID_HANDLE_VALUE, nullptr, PAGE_READWRITE, static_cast<DWORD>(size >> 32),
      static_cast<DWORD>(size & 0xFFFFFFFFu), object_name(name).c_str()));
  if (!mapping) fail("CreateFileMapping " + name);
  if (::GetLastError() == ERROR_ALREADY_EXISTS)
    throw std::runtime_error("CreateFileMapping " + name + ": the name is taken");
  void* p = map_view(mapping.get(), bytes, name);
  return SharedSegment(std::move(name), p, bytes, self, as_value(mapping.release()));
}

SharedSegment SharedSegment::open(const std::string& name, std::size_t bytes) {
  win32::Handle mapping(::OpenFileMappingW(FILE_MAP_ALL_ACCESS, FALSE, object_name(name).c_str()));
  if (!mapping) fail("OpenFileMapping " + name);
  void* p = map_view(mapping.get(), bytes, name);
  return SharedSegment(name, p, bytes, -1, as_value(mapping.release()));
}

void SharedSegment::unlink() {
  if (unlinked_ || creator_ != launch::current_process_id()) return;
  if (handle_ != 0) ::CloseHandle(as_handle(handle_));
  handle_ = 0;
  unlinked_ = true;
}

SharedSegment::~SharedSegment() {
  unlink();
  if (data_ != nullptr) ::UnmapViewOfFile(data_);
  if (handle_ != 0) ::CloseHandle(as_handle(handle_));
}

bool shared_segment_exists(const std::string& name) {
  win32::Handle mapping(::OpenFileMappingW(FILE_MAP_READ, FALSE, object_name(name).c_str()));
  return static_cast<bool>(mapping);
}

}  // namespace fc
