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
#include <vector>

#include <nlohmann/json.hpp>

namespace fc {

using EnvironmentContributor = void (*)(nlohmann::json& env);

bool register_environment_contributor(EnvironmentContributor fn);

// Everything this process can say about itself; `program` names it in the result.
nlohmann::json collect_environment(const std::string& program);

// An OpenMP runtime mapped into this process: what a case's expectation depends on (libgomp has
// no fork handling; LLVM's and Intel's libomp have).
struct OpenMpRuntime {
  std::string name;    // libgomp, libomp, libiomp, vcomp: how its file name starts
  std::string family;  // "libgomp (GNU)", "libomp (LLVM)", ...
  std::string path;
  bool runs_openmp = false;  // it defines omp_get_max_threads itself (not a shim or a dependency)
};

// The OpenMP runtimes mapped into this process, in load order; empty when none is.
std::vector<OpenMpRuntime> openmp_runtimes_loaded();

// The first loaded runtime that defines omp_get_max_threads itself: the one OpenMP code runs
// with. Empty (name "") when none is loaded.
OpenMpRuntime openmp_runtime();

// omp_get_max_threads() of that runtime; -1 when none is loaded.
int omp_max_threads();

// A thread count a program can report (the torch program: libtorch's intra-op threads).
using ThreadCounter = int (*)();
bool register_thread_counter(const char* name, ThreadCounter fn);

// The thread counts in force in this process now: the OpenMP runtime's omp_get_max_threads,
// each registered counter, and the CPUs this process may run on. repro_main records them as the
// process starts (the machine's defaults) and when the case's run ends (what it used), in every
// result's details.threads.
nlohmann::json thread_counts();

// FORKCHECK_ENVIRONMENT(add_my_facts) { env["mine"] = ...; }
#define FC_ENV_CONCAT_(a, b) a##b
#define FC_ENV_CONCAT(a, b) FC_ENV_CONCAT_(a, b)
#define FORKCHECK_ENVIRONMENT(ident)                                            \
  static void ident(nlohmann::json& env);                                       \
  [[maybe_unused]] static const bool FC_ENV_CONCAT(fc_env_registered_, ident) = \
      ::fc::register_environment_contributor(&ident);                           \
  static void ident(nlohmann::json& env)

}  // namespace fc
