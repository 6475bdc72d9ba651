// `forkcheck env [--json]`: the environment fingerprint alone, as a bug ticket needs it.
#pragma once

namespace fc::harness {

// Prints the fingerprint; 0, or 1 when it could not be collected.
int print_environment(bool as_json);

}  // namespace fc::harness
