// Windows has no signal dispositions to hand down, no SIGPIPE (a write to a closed pipe fails),
// and no descriptor limit of this kind: nothing to record or change.
#include "harness/supervise/own_process.h"

namespace fc::harness {

void record_inherited_signals() {}
std::vector<int> inherited_ignored_signals() { return {}; }
void ignore_sigpipe() {}
void open_closed_stdio() {}
void raise_descriptor_limit() {}
std::uint64_t inherited_descriptor_limit() { return 0; }

}  // namespace fc::harness
