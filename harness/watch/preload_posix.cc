// Linux: LD_PRELOAD. macOS: DYLD_INSERT_LIBRARIES, which the system ignores for programs
// protected by SIP (everything under /usr, /bin, /sbin, /System, except /usr/local); the shim
// itself is Linux-only for now, so on macOS `watch` says it is unsupported. Windows has no fork
// to watch.
#include "harness/watch/preload.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "harness/base/usage_error.h"
#include "harness/platform/install_layout.h"

namespace fc::harness {
namespace {

namespace fs = std::filesystem;

#if defined(__APPLE__)
constexpr const char* kPreloadVar = "DYLD_INSERT_LIBRARIES";
constexpr const char* kShimFile = "libforkcheck_watch.dylib";
#else
constexpr const char* kPreloadVar = "LD_PRELOAD";
constexpr const char* kShimFile = "libforkcheck_watch.so";
#endif

#if defined(__APPLE__)
bool sip_protected(const std::string& program) {
  std::error_code ec;
  const std::string p = fs::weakly_canonical(program, ec).string();
  for (const char* dir : {"/usr/", "/bin/", "/sbin/", "/System/"})
    if (p.rfind(dir, 0) == 0 && p.rfind("/usr/local/", 0) != 0) return true;
  return false;
}
#endif

}  // namespace

std::string find_watch_shim(std::string* looked) {
  const PartLookup lookup = find_watch_shim_file(kShimFile);
  if (looked) *looked = lookup.looked_text();
  return lookup.found.empty() ? std::string()
                              : fs::absolute(lookup.found).lexically_normal().string();
}

std::vector<std::pair<std::string, std::string>> watch_environment(const std::string& program,
                                                                   const std::string& events_dir) {
#if defined(_WIN32)
  (void)program;
  (void)events_dir;
  throw UsageError("watch: not supported on Windows: there is no fork() to watch");
#else
#if defined(__APPLE__)
  if (sip_protected(program))
    throw UsageError("watch: macOS does not let DYLD_INSERT_LIBRARIES into " + program +
                     " (System Integrity Protection): run a copy outside /usr, /bin, /sbin, "
                     "/System, such as your own Python");
#else
  (void)program;
#endif
  std::string looked;
  const std::string shim = find_watch_shim(&looked);
  if (shim.empty()) {
#if defined(__APPLE__)
    throw UsageError("watch: not supported on macOS yet: the preload shim is built for Linux only");
#else
    throw std::runtime_error("watch: cannot find the preload shim " + std::string(kShimFile) +
                             " (looked at " + looked + "; set " + kWatchShimVar + ")");
#endif
  }
  // The loader splits its preload list at spaces and colons.
  if (shim.find_first_of(": ") != std::string::npos)
    throw std::runtime_error("watch: the shim's path " + shim + " has a space or a colon, which " +
                             kPreloadVar + " cannot carry");
  std::string preload = shim;
  if (const char* theirs = std::getenv(kPreloadVar); theirs && *theirs)
    preload += std::string(":") + theirs;
  return {{kPreloadVar, preload}, {kWatchDirVar, events_dir}};
#endif
}

}  // namespace fc::harness
