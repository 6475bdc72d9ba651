// objc-initialize-fork's probe of the Objective-C runtime, which only Apple platforms have:
// objc_probe_mac.cc there, objc_probe_other.cc (every variant skipped, saying why) elsewhere.
#pragma once

#include "core/case_registry.h"

namespace fc::cases::objc_probe {

// Why this platform cannot run the case; nullptr where it can (macOS).
const char* unavailable_reason();

// Runs one variant: a class with its own +initialize, one extra thread alive at fork, the
// worker's first message to the class.
fc::CaseResult run(const fc::VariantSpec& variant);

}  // namespace fc::cases::objc_probe
