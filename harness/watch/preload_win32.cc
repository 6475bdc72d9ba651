// Windows has no fork(), so there is nothing for `forkcheck watch` to watch there, and no shim
// to find: it says so rather than run the program unwatched.
#include "harness/watch/preload.h"

#include "harness/base/usage_error.h"

namespace fc::harness {

std::string find_watch_shim(std::string* looked) {
  if (looked) *looked = "nowhere: Windows has no preload shim";
  return {};
}

std::vector<std::pair<std::string, std::string>> watch_environment(const std::string&,
                                                                   const std::string&) {
  throw UsageError("watch: not supported on Windows: there is no fork() to watch");
}

}  // namespace fc::harness
