// One live run per output folder. A run holds an advisory lock on FOLDER/.forkcheck.lock for as
// long as its process lives; a second run into the folder finds it held and is refused, before
// it touches anything there (two runs appending to one run.jsonl print each other's results and
// lose one's). The OS drops the lock when the process ends, however it ends (SIGKILL included),
// so a killed run never blocks the next. The file stays: removing it would let a run that opened
// it just before lock the removed file while a third locks a new one of the same name.
// Per OS: folder_lock_posix.cc (fcntl record locks), folder_lock_win32.cc (LockFileEx).
#pragma once

#include <filesystem>
#include <string>
#include <system_error>

#include "harness/platform/process_id.h"

namespace fc::harness {

inline constexpr const char* kFolderLockFileName = ".forkcheck.lock";

struct FolderLock {
  enum class Result {
    kHeld,         // this process holds it, until it exits
    kBusy,         // another live process holds it
    kUnsupported,  // the file system keeps no locks (an NFS mount without a lock service)
    kFailed,       // the lock file could not be created or opened (`why`)
  };
  Result result = Result::kFailed;
  ProcessId holder = 0;  // kBusy: the process that holds it (0: the OS would not say)
  std::string why;       // kUnsupported, kFailed: the OS's reason
};

// Takes the lock of `dir` (an existing folder) for the rest of this process's life; taking it
// again in the same process holds it still. Never waits.
FolderLock lock_folder(const std::filesystem::path& dir);

// The key a folder's lock is held under in this process: its canonical path where it has one,
// so that two spellings of one folder are one lock (both platforms' lock_folder use it).
inline std::string folder_lock_key(const std::filesystem::path& dir) {
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(dir, ec);
  return (ec ? dir : canonical).string();
}

}  // namespace fc::harness
