// A named shared memory segment that processes started any way can map by name, as Python's
// multiprocessing.shared_memory: a spawned worker cannot be handed a mapping (its payload is
// JSON), but it can be handed the name. POSIX: shm_open (shared_segment_posix.cc; names are kept
// within macOS's 31 characters); Windows: a named file mapping in the session's namespace
// (shared_segment_win32.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <forkcheck/launch.h>

namespace fc {

class SharedSegment {
 public:
  // A new zero-filled segment with a unique name (/forkcheck-PREFIX-PID-N). The creating process
  // removes the name in its destructor, on every path out of the case, unless done earlier.
  static SharedSegment create(const std::string& prefix, std::size_t bytes);
  // Maps an existing segment by name (in a worker).
  static SharedSegment open(const std::string& name, std::size_t bytes);

  SharedSegment(SharedSegment&& other) noexcept;
  SharedSegment& operator=(SharedSegment&&) = delete;
  SharedSegment(const SharedSegment&) = delete;
  ~SharedSegment();

  void* data() const { return data_; }
  const std::string& name() const { return name_; }
  // Creator only: remove the name now (mappings stay valid), once every worker has mapped the
  // segment. POSIX: shm_unlink, nothing is left behind should this process be killed. Windows:
  // the creator's handle is closed; the name goes with the last process that maps it.
  void unlink();
  bool unlinked() const { return unlinked_; }

 private:
  SharedSegment(std::string name, void* data, std::size_t size, launch::ProcessId creator,
                std::uintptr_t handle);
  std::string name_;
  void* data_ = nullptr;
  std::size_t size_ = 0;
  launch::ProcessId creator_ = -1;  // the process that owns the name; -1 where it was opened
  std::uintptr_t handle_ = 0;       // Windows: the mapping's handle (0 on POSIX)
  bool unlinked_ = false;
};

// Whether a segment of that name can still be opened (evidence that it was cleaned up).
bool shared_segment_exists(const std::string& name);

}  // namespace fc
