// This process on Linux: what /proc says about it. See process.h.
#include <dirent.h>
#include <limits.h>
#include <unistd.h>

#include <forkcheck/launch.h>
#include "launch/process.h"

namespace fc::launch {

std::string self_executable_path() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  return std::string(buf, static_cast<std::size_t>(n));
}

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
