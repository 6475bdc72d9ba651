// How a process ended, told apart properly: an exit code and a signal are different things
// (Boost.Process v1's exit_code() reports exit(11) and SIGSEGV alike).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fc::harness {

struct ExitStatus {
  bool ended = false;
  int code = -1;   // exit code when it exited, else -1
  int signal = 0;  // the signal that ended it, else 0
  bool core_dumped = false;

  static ExitStatus from_wait_status(int status);
  bool exited_ok() const { return ended && signal == 0 && code == 0; }
  std::string describe()
      const;  // "exit status 3", "killed by SIGSEGV (Segmentation fault), core dumped"
  nlohmann::json to_json() const;
};

// "SIGSEGV"; "SIG34" for one without a name.
std::string signal_name(int sig);

}  // namespace fc::harness
