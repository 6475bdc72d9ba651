#include "launch/host_facts.h"

#include <cstdlib>
#include <string>

#include <forkcheck/launch.h>
#include "launch/process.h"

namespace fc::launch {
namespace {

// Variables that change how OpenMP, BLAS, CUDA or fork safety behave, when set.
nlohmann::json relevant_variables() {
  nlohmann::json vars = nlohmann::json::object();
  for (const char* name :
       {"OMP_NUM_THREADS", "OMP_WAIT_POLICY", "OMP_PROC_BIND", "GOMP_SPINCOUNT", "KMP_INIT_AT_FORK",
        "KMP_AFFINITY", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "BLIS_NUM_THREADS",
        "CUDA_VISIBLE_DEVICES", "OBJC_DISABLE_INITIALIZE_FORK_SAFETY", "LD_PRELOAD"})
    if (const char* v = std::getenv(name)) vars[name] = v;
  return vars;
}

// POSIX has all three (spawn and forkserver are forkcheck's own, repros/launch); Windows has
// spawn alone.
nlohmann::json start_methods() {
  nlohmann::json methods = nlohmann::json::array();
  for (auto m : {StartMethod::kFork, StartMethod::kSpawn, StartMethod::kForkserver})
    if (unavailable_reason(m) == nullptr) methods.push_back(to_string(m));
  return methods;
}

}  // namespace

nlohmann::json host_environment(const std::string& program) {
  return {
      {"collected_by", {{"program", program}, {"pid", current_process_id()}}},
      {"os", os_facts()},
      {"libc", libc_facts()},
      {"cpus", cpu_facts()},
      {"start_methods", start_methods()},
      {"ptrace_scope", ptrace_scope()},
      {"variables", relevant_variables()},
  };
}

}  // namespace fc::launch
