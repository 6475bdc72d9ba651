// The thread count the forkserver checks, from /proc/self/task: Linux. Where there is no /proc
// (macOS) it says -1, unknown.
#include <dirent.h>

#include "launch/launch.h"

namespace fc::launch {

int thread_count() {
  DIR* dir = ::opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  int n = 0;
  while (const struct dirent* e = ::readdir(dir)) {
    if (e->d_name[0] != '.') ++n;  // one entry per thread, plus "." and ".."
  }
  ::closedir(dir);
  return n > 0 ? n : -1;
}

}  // namespace fc::launch
