// libtorch's part of the environment fingerprint (forkcheck-repro-torch --env): its version, how
// it was built, and the thread pools it would start with.
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <torch/cuda.h>
#include <torch/version.h>

#ifndef _WIN32
#include <dlfcn.h>
#endif

#include <cstdlib>
#include <string>

#include "core/case_registry.h"
#include "core/environment.h"

namespace {

// The real path of the libtorch_cpu this program runs with (the file at::get_num_threads is in),
// or "" where the platform does not say.
std::string libtorch_cpu_path() {
#ifndef _WIN32
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&at::get_num_threads), &info) == 0 || !info.dli_fname)
    return "";
  if (char* real = ::realpath(info.dli_fname, nullptr)) {
    std::string path = real;
    std::free(real);
    return path;
  }
  return info.dli_fname;
#else
  return "";
#endif
}

// forkcheck list says which libtorch the torch cases run against.
void add_libtorch_program_facts(nlohmann::json& facts) {
  facts["libtorch"] = {{"version", TORCH_VERSION}, {"library", libtorch_cpu_path()}};
}
[[maybe_unused]] const bool registered_facts =
    fc::register_program_facts(&add_libtorch_program_facts);

int torch_intra_op_threads() { return at::get_num_threads(); }
[[maybe_unused]] const bool registered_intra_op =
    fc::register_thread_counter("torch_intra_op", &torch_intra_op_threads);

FORKCHECK_ENVIRONMENT(add_libtorch_facts) {
  env["libtorch"] = {
      {"version", TORCH_VERSION},  // as its headers say; the loaded files are under `libraries`
      {"has_openmp", at::hasOpenMP()},
      {"has_mkl", at::hasMKL()},
      {"has_mkldnn", at::hasMKLDNN()},
      {"has_lapack", at::hasLAPACK()},
      {"openmp_version", at::get_openmp_version()},
      {"cuda_devices", torch::cuda::device_count()},
      {"config", at::show_config()},
      {"parallel_info", at::get_parallel_info()},
  };
  nlohmann::json threads = env.value("threads", nlohmann::json::object());
  threads["torch_intra_op"] = at::get_num_threads();
  threads["torch_inter_op"] = at::get_num_interop_threads();
  env["threads"] = threads;
}

}  // namespace
