// libtorch's part of the environment fingerprint (forkcheck-repro-torch --env): its version, how
// it was built, and the thread pools it would start with.
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include "core/environment.h"

namespace {

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
