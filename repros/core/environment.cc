#include "core/environment.h"

#include <filesystem>
#include <string>
#include <vector>

#include <forkcheck/launch.h>
#include "core/libraries.h"
#include "launch/host_facts.h"

namespace fc {
namespace {

std::vector<EnvironmentContributor>& contributors() {
  static std::vector<EnvironmentContributor> c;
  return c;
}

std::string compiler() {
#if defined(__clang__)
  return "clang " __clang_version__;
#elif defined(__GNUC__)
  return "GCC " __VERSION__;
#else
  return "unknown";
#endif
}

// --- libraries mapped into this process, classified as threadpoolctl does -----------------

struct Known {
  const char* prefix;  // of the file name
  const char* kind;    // openmp | blas | torch | cuda
  const char* family;
};

// Linux and macOS file names (libgomp.so.1, libomp.dylib), then Windows module names, matched
// lower-cased (vcomp140.dll, libiomp5md.dll, mkl_rt.2.dll, torch_cpu.dll, nvcuda.dll).
const Known kKnown[] = {
    {"libgomp", "openmp", "libgomp (GNU)"},
    {"libomp", "openmp", "libomp (LLVM)"},
    {"libiomp", "openmp", "libiomp (Intel)"},
    {"vcomp", "openmp", "vcomp (MSVC)"},
    {"libopenblas", "blas", "OpenBLAS"},
    {"libmkl_rt", "blas", "MKL"},
    {"libmkl_core", "blas", "MKL"},
    {"mkl_rt", "blas", "MKL"},
    {"libblis", "blas", "BLIS"},
    {"libflexiblas", "blas", "FlexiBLAS"},
    {"libblas", "blas", "BLAS"},
    {"libcblas", "blas", "CBLAS"},
    {"libtorch", "torch", "libtorch"},
    {"libc10", "torch", "libtorch"},
    {"torch_cpu", "torch", "libtorch"},
    {"c10.", "torch", "libtorch"},
    {"libcuda.", "cuda", "CUDA driver"},
    {"libcudart", "cuda", "CUDA runtime"},
    {"nvcuda.", "cuda", "CUDA driver"},
    {"cudart64", "cuda", "CUDA runtime"},
};

template <typename Fn>
Fn own_symbol(const std::string& path, const char* name) {
  return libraries::as_function<Fn>(libraries::own_symbol(path, name));
}

// What the library itself says, through the entry points threadpoolctl also uses.
void library_details(const std::string& path, nlohmann::json& lib) {
  if (auto f = own_symbol<int (*)()>(path, "omp_get_max_threads")) lib["max_threads"] = f();
  if (auto f = own_symbol<const char* (*)()>(path, "openblas_get_config")) {
    lib["implementation"] = "OpenBLAS";
    lib["version"] = f();
  }
  if (auto f = own_symbol<int (*)()>(path, "openblas_get_num_threads")) lib["max_threads"] = f();
  if (auto f = own_symbol<void (*)(char*, int)>(path, "MKL_Get_Version_String")) {
    char buf[256] = {};
    f(buf, sizeof buf - 1);
    lib["implementation"] = "MKL";
    lib["version"] = buf;
  }
  if (auto f = own_symbol<int (*)()>(path, "MKL_Get_Max_Threads")) lib["max_threads"] = f();
  if (auto f = own_symbol<const char* (*)()>(path, "bli_info_get_version_str")) {
    lib["implementation"] = "BLIS";
    lib["version"] = f();
  }
  if (auto f = own_symbol<long (*)()>(path, "bli_thread_get_num_threads")) lib["max_threads"] = f();
}

nlohmann::json loaded_libraries() {
  nlohmann::json libs = nlohmann::json::array();
  for (const auto& path : libraries::loaded()) {
    const std::string file = libraries::file_name_for_matching(path);
    const Known* k = nullptr;
    for (const auto& cand : kKnown)
      if (file.rfind(cand.prefix, 0) == 0) {
        k = &cand;
        break;
      }
    if (!k) continue;
    nlohmann::json lib = {{"kind", k->kind}, {"family", k->family}, {"path", path}};
    std::error_code ec;
    auto real = std::filesystem::canonical(std::filesystem::u8path(path), ec);
    // The real file tells which alternative a generic name (libblas.so.3) resolves to, and its
    // suffix is the library's own version where it has no API for it (libgomp.so.1.0.0).
    if (!ec && real.u8string() != path) lib["real_path"] = real.u8string();
    library_details(path, lib);
    // A generic libblas.so.3 with no API of its own: its real file says which alternative it is.
    if (lib["kind"] == "blas" && !lib.contains("implementation")) {
      const std::string r = lib.value("real_path", path);
      lib["implementation"] = r.find("openblas") != std::string::npos ? "OpenBLAS"
                              : r.find("atlas") != std::string::npos  ? "ATLAS"
                              : r.find("/blas/") != std::string::npos ? "reference BLAS (netlib)"
                                                                      : k->family;
    }
    libs.push_back(std::move(lib));
  }
  return libs;
}

// --- CUDA, through the driver API loaded at run time: no build dependency on CUDA ------------

nlohmann::json cuda_facts() {
  std::string why;
  const std::string driver = launch::cuda_driver_library(why);
  if (driver.empty()) return {{"driver", nullptr}, {"summary", "no CUDA driver: " + why}};
  std::string error;
  void* h = libraries::open(driver, error);
  if (!h) return {{"driver", nullptr}, {"summary", "no CUDA driver (" + driver + " not found)"}};
  // The driver stays loaded: unloading it mid-process is not supported.
  using CuInit = int (*)(unsigned);
  using CuIntOut = int (*)(int*);
  using CuDeviceGet = int (*)(int*, int);
  using CuDeviceGetName = int (*)(char*, int, int);
  using CuDeviceTotalMem = int (*)(size_t*, int);
  using CuDeviceGetAttribute = int (*)(int*, int, int);
  auto symbol = [h](const char* name) { return libraries::symbol(h, name); };
  auto init = libraries::as_function<CuInit>(symbol("cuInit"));
  auto driver_version = libraries::as_function<CuIntOut>(symbol("cuDriverGetVersion"));
  auto count = libraries::as_function<CuIntOut>(symbol("cuDeviceGetCount"));
  auto get = libraries::as_function<CuDeviceGet>(symbol("cuDeviceGet"));
  auto name = libraries::as_function<CuDeviceGetName>(symbol("cuDeviceGetName"));
  auto mem = libraries::as_function<CuDeviceTotalMem>(symbol("cuDeviceTotalMem_v2"));
  auto attr = libraries::as_function<CuDeviceGetAttribute>(symbol("cuDeviceGetAttribute"));
  if (!init || !driver_version || !count || !get || !name)
    return {{"driver", driver}, {"summary", driver + " lacks the driver API entry points"}};
  nlohmann::json cuda = {{"driver", driver}};
  int v = 0;
  if (driver_version(&v) == 0)
    cuda["driver_version"] = std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
  if (int rc = init(0); rc != 0) {
    cuda["init_error"] = rc;
    cuda["summary"] = "CUDA driver " + cuda.value("driver_version", std::string("?")) +
                      ": cuInit failed with error " + std::to_string(rc);
    return cuda;
  }
  int n = 0;
  count(&n);
  nlohmann::json devices = nlohmann::json::array();
  for (int i = 0; i < n; ++i) {
    int dev = 0;
    if (get(&dev, i) != 0) continue;
    char buf[256] = {};
    name(buf, sizeof buf - 1, dev);
    nlohmann::json d = {{"index", i}, {"name", buf}};
    size_t bytes = 0;
    if (mem && mem(&bytes, dev) == 0) d["memory_mib"] = bytes >> 20;
    int major = 0, minor = 0;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR
    if (attr && attr(&major, 75, dev) == 0 && attr(&minor, 76, dev) == 0)
      d["compute_capability"] = std::to_string(major) + "." + std::to_string(minor);
    devices.push_back(std::move(d));
  }
  cuda["devices"] = devices;
  cuda["summary"] = "CUDA driver " + cuda.value("driver_version", std::string("?")) + ", " +
                    std::to_string(n) + " device(s)";
  return cuda;
}

std::vector<std::pair<const char*, ThreadCounter>>& thread_counters() {
  static std::vector<std::pair<const char*, ThreadCounter>> counters;
  return counters;
}

}  // namespace

std::vector<OpenMpRuntime> openmp_runtimes_loaded() {
  std::vector<OpenMpRuntime> runtimes;
  for (const auto& path : libraries::loaded()) {
    const std::string file = libraries::file_name_for_matching(path);
    for (const auto& k : kKnown)
      if (std::string(k.kind) == "openmp" && file.rfind(k.prefix, 0) == 0) {
        // "libgomp (GNU)" -> "libgomp"
        const std::string family = k.family;
        runtimes.push_back({family.substr(0, family.find(' ')), family, path,
                            libraries::own_symbol(path, "omp_get_max_threads") != nullptr});
        break;
      }
  }
  return runtimes;
}

OpenMpRuntime openmp_runtime() {
  for (auto& r : openmp_runtimes_loaded())
    if (r.runs_openmp) return r;
  return {};
}

int omp_max_threads() {
  const OpenMpRuntime r = openmp_runtime();
  auto f = r.path.empty() ? nullptr : own_symbol<int (*)()>(r.path, "omp_get_max_threads");
  return f ? f() : -1;
}

bool register_thread_counter(const char* name, ThreadCounter fn) {
  thread_counters().emplace_back(name, fn);
  return true;
}

nlohmann::json thread_counts() {
  nlohmann::json t = nlohmann::json::object();
  if (const int n = omp_max_threads(); n >= 0) t["omp_max_threads"] = n;
  for (const auto& [name, fn] : thread_counters()) t[name] = fn();
  const auto cpus = launch::cpu_facts();
  t["cpus"] = cpus.value("affinity", nlohmann::json()).is_null()
                  ? cpus.value("online", nlohmann::json())
                  : cpus["affinity"];
  return t;
}

bool register_environment_contributor(EnvironmentContributor fn) {
  contributors().push_back(fn);
  return true;
}

nlohmann::json collect_environment(const std::string& program) {
  nlohmann::json env = launch::host_environment(program);
  env["compiler"] = compiler();
  for (auto* fn : contributors()) fn(env);
  env["cuda"] = cuda_facts();
  env["libraries"] = loaded_libraries();

  // The default thread counts a case starts with.
  nlohmann::json threads = env.value("threads", nlohmann::json::object());
  threads["nproc"] =
      env["cpus"]["affinity"].is_null() ? env["cpus"]["online"] : env["cpus"]["affinity"];
  for (const auto& lib : env["libraries"])
    if (lib["kind"] == "openmp" && lib.contains("max_threads") &&
        !threads.contains("omp_get_max_threads"))
      threads["omp_get_max_threads"] = lib["max_threads"];
  env["threads"] = threads;

  nlohmann::json omp = nlohmann::json::array(), blas = nlohmann::json::array();
  for (const auto& lib : env["libraries"]) {
    const std::string file = std::filesystem::u8path(lib.value("real_path", lib.value("path", "")))
                                 .filename()
                                 .u8string();
    if (lib["kind"] == "openmp") omp.push_back(lib.value("family", "") + " " + file);
    if (lib["kind"] == "blas")
      blas.push_back(lib.value("implementation", lib.value("family", "")) + " " +
                     lib.value("real_path", lib.value("path", "")));
  }
  env["openmp_runtimes"] = omp;
  env["blas"] = blas;
  return env;
}

}  // namespace fc
