// No zygote here: re-parenting each forked command to the harness needs Linux's child
// subreaper, and on macOS forking a process that has loaded system frameworks is itself a hazard
// (see the objc case). Every variant is started by exec.
#include "harness/supervise/zygote.h"

namespace fc::harness {

Zygote::Zygote(const std::string&, double) { why_not_ = "no zygote on this platform"; }
Zygote::~Zygote() = default;

std::optional<ProcessId> Zygote::start(const std::vector<std::string>&, int, int, int,
                                       const std::vector<std::pair<std::string, std::string>>&,
                                       std::string& why) {
  why = why_not_;
  return std::nullopt;
}

Zygotes::Zygotes(bool) : enabled_(false) {}

Zygote* Zygotes::for_program(const std::string&) { return nullptr; }

std::string Zygotes::why_off() const {
  return "this platform has no zygote (it needs Linux's child subreaper): every variant was exec'd";
}

}  // namespace fc::harness
