// Case processes forked from a pristine, preloaded zygote instead of exec'd each time (Linux).
// Loading libtorch costs about half a second of static initialisation per process; a zygote of
// forkcheck-repro-torch pays it once per run, and each variant's process is forked from it while
// it has one thread and has run nothing (repros/core/zygote_server.h has the protocol). The
// variant's process is the same as an exec'd one would be: same program image, same environment
// (variants that set environment variables, which libraries may read as they load, are exec'd),
// its own process group, stdio and channel from the supervisor, reaped by us. `--no-zygote` (or
// FORKCHECK_ZYGOTE=0) execs every variant; the report says how each one was started.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/platform/process_id.h"

namespace fc::harness {

class Zygote {
 public:
  // Starts `program --zygote` and waits (up to `timeout_s`) until it says it is ready.
  explicit Zygote(const std::string& program, double timeout_s = 60);
  ~Zygote();
  Zygote(const Zygote&) = delete;
  Zygote& operator=(const Zygote&) = delete;

  bool ready() const { return sock_ >= 0; }
  const std::string& why_not() const { return why_not_; }

  // Forks a copy running `args` (the program's arguments, without its name) with stdout, stderr
  // and, when `chan` >= 0, the channel on those fds, and `env` set. Its pid, or nullopt and `why`.
  std::optional<ProcessId> start(const std::vector<std::string>& args, int out, int err, int chan,
                                 const std::vector<std::pair<std::string, std::string>>& env,
                                 std::string& why);

 private:
  [[maybe_unused]] ProcessId pid_ = -1;            // used on Linux only (zygote_linux.cc)
  [[maybe_unused]] std::uint64_t start_time_ = 0;  // with pid_, names the zygote for good
  int sock_ = -1;
  std::string why_not_;
};

// One zygote per program, started the first time it is asked for.
class Zygotes {
 public:
  explicit Zygotes(bool enabled);
  // nullptr when zygotes are off or this platform has none.
  Zygote* for_program(const std::string& program);
  // Why variants were exec'd rather than forked from a zygote; empty when they were not.
  std::string why_off() const;

 private:
  [[maybe_unused]] bool enabled_;  // used on Linux only
  std::map<std::string, std::unique_ptr<Zygote>> by_program_;
};

}  // namespace fc::harness
