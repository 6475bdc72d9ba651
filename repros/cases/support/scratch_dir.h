// A case's scratch directory: new (never one that existed), owner-only, under the temp directory
// or a base the case names (a short one where a Unix socket's path must fit), and removed with
// everything in it when the case is done. A variant ended by SIGTERM runs no destructor: register
// what must go then with remove_on_termination (shared_memory.h).
#pragma once

#include <filesystem>
#include <string>

namespace fc::cases {

class ScratchDir {
 public:
  // "<base>/forkcheck-<tag>-<pid>-<n>"; `base` empty: the temp directory. Throws
  // std::system_error when the base refuses a new directory.
  explicit ScratchDir(const std::string& tag, const std::filesystem::path& base = {});
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // A path inside it, as a string (the form the cases' payloads carry).
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace fc::cases
