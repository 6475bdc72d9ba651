// This process on macOS, which has no /proc: dyld knows the program's path, Mach the task's
// threads. See process.h.
#include <limits.h>
#include <mach-o/dyld.h>
#include <mach/mach.h>
#include <stdlib.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <forkcheck/launch.h>
#include "launch/process.h"

namespace fc::launch {

std::string self_executable_path() {
  uint32_t size = 0;
  _NSGetExecutablePath(nullptr, &size);  // says how big the buffer must be
  std::vector<char> buf(size + 1, '\0');
  if (_NSGetExecutablePath(buf.data(), &size) != 0) return {};
  // The path the program was started by, perhaps relative or through a symlink: resolve it.
  char resolved[PATH_MAX];
  if (::realpath(buf.data(), resolved) != nullptr) return resolved;
  return buf.data();
}

int thread_count() {
  thread_act_array_t threads = nullptr;
  mach_msg_type_number_t count = 0;
  if (::task_threads(::mach_task_self(), &threads, &count) != KERN_SUCCESS) return -1;
  // The call hands us a send right per thread and the array itself: give all of them back.
  for (mach_msg_type_number_t i = 0; i < count; ++i)
    ::mach_port_deallocate(::mach_task_self(), threads[i]);
  ::vm_deallocate(::mach_task_self(), reinterpret_cast<vm_address_t>(threads),
                  sizeof(threads[0]) * count);
  return count > 0 ? static_cast<int>(count) : -1;
}

}  // namespace fc::launch
