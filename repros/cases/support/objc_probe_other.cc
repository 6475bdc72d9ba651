// objc-initialize-fork off Apple platforms: no Objective-C runtime, every variant skipped. See
// objc_probe.h.
#include "cases/support/objc_probe.h"

namespace fc::cases::objc_probe {

const char* unavailable_reason() {
  return "needs macOS's Objective-C runtime (libobjc), which this platform does not have; "
         "static-init-fork is its analogue here (one-time initialisation interrupted by fork)";
}

fc::CaseResult run(const fc::VariantSpec&) {
  return {fc::Outcome::kSkip, "needs macOS's Objective-C runtime", nlohmann::json::object()};
}

}  // namespace fc::cases::objc_probe
