#include <string.h>
#include <sys/wait.h>

#include <csignal>

#include "harness/supervise/exit_status.h"

namespace fc::harness {

ExitStatus ExitStatus::from_wait_status(int status) {
  ExitStatus s;
  s.ended = true;
  if (WIFEXITED(status)) {
    s.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    s.signal = WTERMSIG(status);
#ifdef WCOREDUMP
    s.core_dumped = WCOREDUMP(status);
#endif
  }
  return s;
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGHUP:
      return "SIGHUP";
    case SIGINT:
      return "SIGINT";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGILL:
      return "SIGILL";
    case SIGTRAP:
      return "SIGTRAP";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGKILL:
      return "SIGKILL";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGUSR2:
      return "SIGUSR2";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGALRM:
      return "SIGALRM";
    case SIGTERM:
      return "SIGTERM";
    case SIGXCPU:
      return "SIGXCPU";
    case SIGXFSZ:
      return "SIGXFSZ";
    case SIGSYS:
      return "SIGSYS";
    default:
      return "SIG" + std::to_string(sig);
  }
}

std::string ExitStatus::describe() const {
  if (!ended) return "still running";
  if (signal == 0) return "exit status " + std::to_string(code);
  return "killed by " + signal_name(signal) + " (" + ::strsignal(signal) + ")" +
         (core_dumped ? ", core dumped" : "");
}

nlohmann::json ExitStatus::to_json() const {
  nlohmann::json j = {{"code", signal == 0 && ended ? nlohmann::json(code) : nlohmann::json()},
                      {"signal", signal == 0 ? nlohmann::json() : nlohmann::json(signal)}};
  if (signal != 0) {
    j["signal_name"] = signal_name(signal);
    j["core_dumped"] = core_dumped;
  }
  return j;
}

}  // namespace fc::harness
