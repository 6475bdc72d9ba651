// The environment fingerprint, as forkcheck gets it: from a child, never from itself. The harness
// links neither libtorch nor OpenMP, so it asks a repro program (`--env`) what it loads: first
// forkcheck-repro-torch, which loads what the torch cases load; if that fails,
// forkcheck-repro, and the result says so.
#pragma once

#include <nlohmann/json.hpp>

namespace fc::harness {

// Never throws: when no program can answer, the result holds "error" saying why.
// From the torch repro program (else the native one), in a child; `zygotes` may serve it.
nlohmann::json collect_environment(double timeout_s = 60, class Zygotes* zygotes = nullptr);

}  // namespace fc::harness
