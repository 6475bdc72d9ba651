// shm-bus-error off Linux: no mount namespaces to mount a private tmpfs in, every variant skipped.
// See shm_bus_error.h.
#include "cases/support/shm_bus_error.h"

namespace fc::cases::shm_bus_error {

std::string unavailable_reason() {
  return "needs Linux: a tmpfs of a chosen size is mounted in a mount namespace of the variant's "
         "own (unshare(CLONE_NEWNS)), which this platform does not have";
}

fc::CaseResult run(const fc::VariantSpec&) {
  return {fc::Outcome::kSkip, unavailable_reason(), nlohmann::json::object()};
}

}  // namespace fc::cases::shm_bus_error
