// cuda-before-fork (sources 001, 003): the parent initialises CUDA and creates a context, forks,
// and the child's first CUDA call fails: the driver's state belongs to the parent process and is
// not usable in a fork child (documented: CUDA_ERROR_NOT_INITIALIZED, 3). A spawned worker
// initialises its own driver state and works.
//
// The driver is loaded at run time (libcuda.so.1; Windows: nvcuda.dll), so the build needs no
// CUDA; without a driver or a device every variant is skipped, saying which (macOS has no CUDA).
#include <chrono>
#include <stdexcept>
#include <string>

#include <forkcheck/launch.h>
#include "core/case_registry.h"
#include "core/channel.h"
#include "core/libraries.h"
#include "core/pool.h"
#include "launch/host_facts.h"
#include "launch/process.h"

namespace {
namespace cuda_before_fork {

using fc::Outcome;

// The few driver API entry points used, declared here (cuda.h is not needed to build).
using CUresult = int;
using CUdevice = int;
using CUcontext = struct CUctx_st*;
constexpr CUresult kCudaSuccess = 0;

struct Driver {
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDriverGetVersion)(int*) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuCtxCreate_v2)(CUcontext*, unsigned, CUdevice) = nullptr;
  CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;
  std::string load_error;  // set: the driver could not be loaded
};

// A driver entry point by name; the first one missing says so in `error`.
template <typename Fn>
void bind_symbol(void* lib, const std::string& file, const char* name, Fn& fn, std::string& error) {
  fn = fc::libraries::as_function<Fn>(fc::libraries::symbol(lib, name));
  if (!fn && error.empty()) error = file + " lacks " + name;
}

// Loads (once per process) the driver; load_error says why not.
const Driver& driver() {
  static const Driver d = [] {
    Driver r;
    std::string why;
    const std::string file = fc::launch::cuda_driver_library(why);
    if (file.empty()) {
      r.load_error = why;
      return r;
    }
    std::string error;
    void* lib = fc::libraries::open(file, error);
    if (!lib) {
      r.load_error = file + " not found (" + error + ")";
      return r;
    }
    bind_symbol(lib, file, "cuInit", r.cuInit, r.load_error);
    bind_symbol(lib, file, "cuDriverGetVersion", r.cuDriverGetVersion, r.load_error);
    bind_symbol(lib, file, "cuDeviceGetCount", r.cuDeviceGetCount, r.load_error);
    bind_symbol(lib, file, "cuDeviceGet", r.cuDeviceGet, r.load_error);
    bind_symbol(lib, file, "cuCtxCreate_v2", r.cuCtxCreate_v2, r.load_error);
    bind_symbol(lib, file, "cuGetErrorName", r.cuGetErrorName, r.load_error);
    bind_symbol(lib, file, "cuGetErrorString", r.cuGetErrorString, r.load_error);
    return r;
  }();
  return d;
}

// "3 CUDA_ERROR_NOT_INITIALIZED (initialization error)"
std::string describe(CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (driver().cuGetErrorName) driver().cuGetErrorName(r, &name);
  if (driver().cuGetErrorString) driver().cuGetErrorString(r, &text);
  return std::to_string(r) + " " + (name ? name : "(unknown code)") +
         (text ? std::string(" (") + text + ")" : "");
}

nlohmann::json call(const char* what, CUresult r) {
  return {{"call", what}, {"code", r}, {"result", describe(r)}};
}

// Why this machine cannot run the case, or "" (decided at --list time).
std::string skip_reason() {
  const Driver& d = driver();
  if (!d.load_error.empty()) return "no CUDA driver: " + d.load_error;
  if (CUresult r = d.cuInit(0); r != kCudaSuccess)
    return "CUDA driver present but no device: cuInit returned " + describe(r);
  int count = 0;
  if (CUresult r = d.cuDeviceGetCount(&count); r != kCudaSuccess || count == 0)
    return "CUDA driver present but no device: cuDeviceGetCount returned " + describe(r) + ", " +
           std::to_string(count) + " devices";
  return "";
}

FORKCHECK_WORKER(cuda_child_init) {
  const Driver& d = driver();
  if (!d.load_error.empty()) throw std::runtime_error("worker: " + d.load_error);
  fc::channel::step_begin("the worker's cuInit", 30.0);  // a fresh driver start can take seconds
  const CUresult r = d.cuInit(0);
  fc::channel::step_end("the worker's cuInit");
  if (r != kCudaSuccess)
    throw std::runtime_error("cuInit in the worker (pid " +
                             std::to_string(fc::launch::current_process_id()) + ") returned " +
                             describe(r));
  int count = 0, version = 0;
  d.cuDeviceGetCount(&count);
  d.cuDriverGetVersion(&version);
  return {{"pid", fc::launch::current_process_id()},
          {"cuInit", call("cuInit", r)},
          {"devices", count},
          {"driver_version", version}};
}

fc::CaseResult run(const fc::VariantSpec& variant) {
  const Driver& d = driver();
  if (!d.load_error.empty())
    return {Outcome::kSkip, "no CUDA driver: " + d.load_error, nlohmann::json::object()};
  nlohmann::json parent = nlohmann::json::array();
  int version = 0;
  d.cuDriverGetVersion(&version);
  CUresult r = d.cuInit(0);
  parent.push_back(call("cuInit", r));
  CUdevice dev = 0;
  if (r == kCudaSuccess) parent.push_back(call("cuDeviceGet", r = d.cuDeviceGet(&dev, 0)));
  CUcontext ctx = nullptr;
  if (r == kCudaSuccess)
    parent.push_back(call("cuCtxCreate_v2", r = d.cuCtxCreate_v2(&ctx, 0, dev)));
  nlohmann::json details = {{"driver_version", version},
                            {"parent_calls", parent},
                            {"parent_threads_at_fork", fc::launch::thread_count()}};
  if (r != kCudaSuccess)
    return {Outcome::kError, "the parent could not set up CUDA: " + describe(r), details};
  fc::channel::send_details(details);
  auto workers = fc::start_pool(variant, "cuda_child_init", {nlohmann::json::object()});
  return fc::to_case_result(fc::join_pool(workers, std::chrono::seconds(60)), details);
}

std::vector<fc::VariantSpec> variants() {
  std::vector<fc::VariantSpec> v = {
      fc::hazard("fork", "fork", Outcome::kError,
                 "the CUDA driver's state (context, device handles, its threads) belongs to the "
                 "process that initialised it; in a fork child the driver refuses, documented as "
                 "CUDA_ERROR_NOT_INITIALIZED (3)",
                 "parent: cuInit, cuCtxCreate on device 0; fork; the child calls cuInit"),
      fc::fix("spawn", "spawn", "a fresh exec loads and initialises its own driver state",
              "same parent; the worker is a fresh exec that calls cuInit"),
  };
  return fc::skip_all(std::move(v), skip_reason());
}

FORKCHECK_CASE(cuda_before_fork_case) {
  fc::CaseDef c;
  c.id = "cuda-before-fork";
  c.title = "CUDA initialised in the parent, then fork: the child's first CUDA call fails";
  c.source_title = "Pytorch多进程睡死的大坑 / Gumbel dlshogiを作る その5(マルチプロセス対応)";
  c.source_author = "ZERO-A-ONE / TadaoYamaoka";
  c.source_doc = "003, 001";
  c.reported =
      "003 lists, among the causes of workers that never leave pool.join(), initialising CUDA in "
      "the main process, then calling fork() and using CUDA in the child, and gives spawn or "
      "forkserver as the fix (its own hang was libgomp's: see torch-omp-pool-hang). 001 starts "
      "its self-play workers with spawn explicitly because fork easily causes CUDA problems (as "
      "ChatGPT told the author); it reports no failure of its own.";
  c.mechanism =
      "The CUDA driver keeps per-process state (contexts, device file handles, helper threads). "
      "A fork child inherits a copy of that state without the threads and with handles the "
      "kernel driver ties to the parent; NVIDIA documents any CUDA use in such a child as "
      "unsupported, and the driver reports it as not initialised.";
  c.platforms = "Linux with an NVIDIA driver and GPU (Windows: spawn alone; macOS has no CUDA)";
  c.variants = &variants;
  c.run = &run;
  c.explains = {
      {"Cannot re-initialize CUDA in forked subprocess",
       "CUDA was initialised in the parent before it forked: start workers with spawn "
       "(torch.multiprocessing.set_start_method(\"spawn\")), or touch no CUDA before forking"},
  };
  // What in the environment may explain a change of its outcome (forkcheck diff).
  c.environment_topics = {"cuda", "libtorch", "start-methods"};
  c.shows_as = {"risk:fork-with-cuda"};
  return c;
}

}  // namespace cuda_before_fork
}  // namespace
