// Stacks as the run log records them, whichever way they were taken: one object
// per thread, frames as text.
#include "harness/stacks/stacks.h"

namespace fc::harness {

nlohmann::json to_json(const Stacks& s) {
  nlohmann::json threads = nlohmann::json::array();
  for (const auto& t : s.threads) {
    nlohmann::json frames = nlohmann::json::array();
    for (const auto& f : t.frames)
      frames.push_back(f.function + (f.where.empty() ? "" : " " + f.where));
    threads.push_back({{"pid", t.pid},
                       {"tid", t.tid},
                       {"name", t.name},
                       {"state", t.state},
                       {"wchan", t.wchan},
                       {"frames", frames}});
  }
  return threads;
}

}  // namespace fc::harness
