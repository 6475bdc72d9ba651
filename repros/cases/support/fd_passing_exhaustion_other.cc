// fd-passing-exhaustion off Linux: every variant skipped. See fd_passing_exhaustion.h.
#include "cases/support/fd_passing_exhaustion.h"

namespace fc::cases::fd_passing_exhaustion {

std::string unavailable_reason() {
  return "needs Linux: what the kernel does with descriptors a receiver has no room for "
         "(MSG_CTRUNC, the message delivered without them) was verified there only";
}

fc::CaseResult run(const fc::VariantSpec&) {
  return {fc::Outcome::kSkip, unavailable_reason(), nlohmann::json::object()};
}

}  // namespace fc::cases::fd_passing_exhaustion
