// The moment now as the reports record it: ISO 8601, UTC, to the second ("2026-11-28T23:06:49Z").
#pragma once

#include <string>

namespace fc::harness {

std::string now_iso8601();

}  // namespace fc::harness
