// The environment fingerprint, collected inside a repro program (`--env`) so that it describes
// what the cases really load: the OpenMP runtime(s) and BLAS mapped into the process, their
// default thread counts, libc, the compiler that built the cases, CUDA when a driver is present.
// The harness never links torch or OpenMP, so it cannot answer these questions about itself.
//
// A program adds facts of its own through a contributor (the torch program adds libtorch's
// version and build settings); contributors run before the loaded libraries are walked, so that
// whatever they load is seen.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fc {

using EnvironmentContributor = void (*)(nlohmann::json& env);

bool register_environment_contributor(EnvironmentContributor fn);

// Everything this process can say about itself; `program` names it in the result.
nlohmann::json collect_environment(const std::string& program);

// FORKCHECK_ENVIRONMENT(add_my_facts) { env["mine"] = ...; }
#define FC_ENV_CONCAT_(a, b) a##b
#define FC_ENV_CONCAT(a, b) FC_ENV_CONCAT_(a, b)
#define FORKCHECK_ENVIRONMENT(ident)                                                   \
  static void ident(nlohmann::json& env);                                              \
  [[maybe_unused]] static const bool FC_ENV_CONCAT(fc_env_registered_, ident) =        \
      ::fc::register_environment_contributor(&ident);                                  \
  static void ident(nlohmann::json& env)

}  // namespace fc
