// POSIX record locks (fcntl F_SETLK) on the folder's lock file: the kernel drops them when the
// process ends, a fork()ed helper (the guardian) does not inherit them, and F_GETLK names the
// process that holds one. They are also dropped when the process closes *any* descriptor of the
// file, so each folder's file is opened once and kept open.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <string>
#include <system_error>

#include "harness/platform/folder_lock.h"

namespace fc::harness {
namespace {

namespace fs = std::filesystem;

// The descriptors of the lock files this process holds, by folder, open until it exits.
std::map<std::string, int>& held_locks() {
  static std::map<std::string, int> held;
  return held;
}

flock whole_file(short type) {
  flock l{};
  l.l_type = type;
  l.l_whence = SEEK_SET;
  l.l_start = 0;
  l.l_len = 0;  // to the end, however long
  return l;
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
  // O_NOFOLLOW: a link put there is not followed to a file elsewhere.
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    out.why = "cannot create " + file.string() + ": " + std::strerror(errno);
    return out;
  }
  // A holder that ends between our try and our question leaves it free: try again.
  for (int attempt = 0; attempt < 3; ++attempt) {
    flock l = whole_file(F_WRLCK);
    if (::fcntl(fd, F_SETLK, &l) == 0) {
      // The holder's pid in the file, for a person looking at the folder (forkcheck asks the
      // kernel instead).
      const std::string pid = std::to_string(::getpid()) + "\n";
      if (::ftruncate(fd, 0) == 0 && ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
        // Only a note: the lock is what counts.
      }
      held_locks()[key] = fd;
      out.result = Result::kHeld;
      return out;
    }
    const int err = errno;
    if (err != EACCES && err != EAGAIN) {
      ::close(fd);
      out.result = Result::kUnsupported;
      out.why = "cannot lock " + file.string() + ": " + std::strerror(err);
      return out;
    }
    flock q = whole_file(F_WRLCK);
    if (::fcntl(fd, F_GETLK, &q) == 0 && q.l_type == F_UNLCK) continue;
    ::close(fd);
    out.result = Result::kBusy;
    out.holder = q.l_type != F_UNLCK ? static_cast<ProcessId>(q.l_pid) : 0;
    return out;
  }
  ::close(fd);
  out.result = Result::kBusy;  // taken and given back three times over: someone else wants it
  return out;
}

}  // namespace fc::harness
