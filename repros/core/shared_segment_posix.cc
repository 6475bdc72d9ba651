// SharedSegment on POSIX (Linux and macOS): shm_open, ftruncate, mmap. See shared_segment.h.
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>
#include <system_error>

#include "core/shared_segment.h"
#include "launch/process.h"

namespace fc {
namespace {

// macOS refuses longer names (PSHMNAMLEN, leading slash included) with ENAMETOOLONG.
constexpr std::size_t kMaxNameLength = 31;

[[noreturn]] void fail(const std::string& what, int err = errno) {
  throw std::system_error(err, std::generic_category(), what);
}

void* map(int fd, std::size_t bytes, const std::string& name) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  ::close(fd);  // the mapping keeps the segment; the descriptor is not needed
  if (p == MAP_FAILED) fail("mmap " + name, err);
  return p;
}

int open_cloexec(const std::string& name, int flags, mode_t mode) {
  const int fd = ::shm_open(name.c_str(), flags, mode);
  // glibc makes it close-on-exec, POSIX does not promise it; it is closed once mapped anyway.
  if (fd >= 0) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  return fd;
}

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
}

SharedSegment SharedSegment::create(const std::string& prefix, std::size_t bytes) {
  static std::atomic<int> counter{0};
  const launch::ProcessId self = launch::current_process_id();
  std::string name =
      "/forkcheck-" + prefix + "-" + std::to_string(self) + "-" + std::to_string(counter++);
  if (name.size() > kMaxNameLength)
    throw std::length_error("shared memory name " + name + " is longer than macOS allows (" +
                            std::to_string(kMaxNameLength) + " characters)");
  const int fd = open_cloexec(name, O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) fail("shm_open " + name);
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {  // new pages read as zeros
    const int err = errno;
    ::close(fd);
    ::shm_unlink(name.c_str());
    fail("ftruncate " + name, err);
  }
  void* p = nullptr;
  try {
    p = map(fd, bytes, name);
  } catch (...) {
    ::shm_unlink(name.c_str());
    throw;
  }
  return SharedSegment(std::move(name), p, bytes, self, 0);
}

SharedSegment SharedSegment::open(const std::string& name, std::size_t bytes) {
  const int fd = open_cloexec(name, O_RDWR, 0);
  if (fd < 0) fail("shm_open " + name);
  return SharedSegment(name, map(fd, bytes, name), bytes, -1, 0);
}

void SharedSegment::unlink() {
  // A fork child holds a copy of this object but not the name: only the creator removes it.
  if (unlinked_ || creator_ != launch::current_process_id()) return;
  ::shm_unlink(name_.c_str());
  unlinked_ = true;
}

SharedSegment::~SharedSegment() {
  unlink();
  if (data_ != nullptr) ::munmap(data_, size_);
}

bool shared_segment_exists(const std::string& name) {
  const int fd = ::shm_open(name.c_str(), O_RDONLY, 0);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

}  // namespace fc
