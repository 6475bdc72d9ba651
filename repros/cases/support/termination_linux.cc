// graceful-shutdown's view of a worker on Linux: /proc/PID/status. See termination.h.
#include <signal.h>

#include <fstream>
#include <string>

#include "cases/support/termination.h"

namespace fc::cases::termination {
namespace {

// A /proc/PID/status field ("" when the process is gone).
std::string status_field(launch::ProcessId pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field + ":", 0) == 0)
      return line.substr(line.find_first_not_of(" \t", field.size() + 1));
  return "";
}

}  // namespace

std::string sigterm_disposition(launch::ProcessId pid) {
  const std::string ign = status_field(pid, "SigIgn"), cgt = status_field(pid, "SigCgt");
  if (ign.empty()) return "";
  const unsigned long long bit = 1ULL << (SIGTERM - 1);
  if (std::stoull(ign, nullptr, 16) & bit) return "ignored";
  if (std::stoull(cgt, nullptr, 16) & bit) return "caught";
  return "default";
}

std::string process_state(launch::ProcessId pid) { return status_field(pid, "State"); }

const char* process_table() { return "/proc"; }

}  // namespace fc::cases::termination
