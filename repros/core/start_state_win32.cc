#include "core/start_state.h"

namespace fc {

nlohmann::json start_state() {
  return {{"note",
           "Windows: a child inherits handles (the harness lists them), not descriptors or "
           "signal dispositions"}};
}

}  // namespace fc
