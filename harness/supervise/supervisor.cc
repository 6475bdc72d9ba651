#include "harness/supervise/supervisor.h"

#include <utility>

namespace fc::harness {

ChildResult supervise(const LaunchSpec& spec) {
  ChildResult out;
  Supervisor().run({spec}, 1, [&](size_t, ChildResult&& r) { out = std::move(r); });
  return out;
}

}  // namespace fc::harness
