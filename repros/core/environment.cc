#include "core/environment.h"

#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fc {
namespace {

std::vector<EnvironmentContributor>& contributors() {
  static std::vector<EnvironmentContributor> c;
  return c;
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

nlohmann::json os_facts() {
  utsname u{};
  ::uname(&u);
  std::string pretty;
  std::ifstream in("/etc/os-release");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("PRETTY_NAME=", 0) != 0) continue;
    pretty = line.substr(12);
    if (pretty.size() >= 2 && pretty.front() == '"' && pretty.back() == '"')
      pretty = pretty.substr(1, pretty.size() - 2);
  }
  return {{"name", pretty.empty() ? std::string(u.sysname) : pretty},
          {"sysname", u.sysname},
          {"kernel", u.release},
          {"kernel_build", u.version},
          {"machine", u.machine}};
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

nlohmann::json cpu_facts() {
  cpu_set_t set;
  CPU_ZERO(&set);
  nlohmann::json affinity = nullptr;
  if (::sched_getaffinity(0, sizeof set, &set) == 0) affinity = CPU_COUNT(&set);
  return {{"online", ::sysconf(_SC_NPROCESSORS_ONLN)},
          {"configured", ::sysconf(_SC_NPROCESSORS_CONF)},
          {"affinity", affinity}};
}

// Yama decides whether gdb may attach to a hung child to take its stacks.
nlohmann::json ptrace_scope() {
  const std::string path = "/proc/sys/kernel/yama/ptrace_scope";
  const std::string v = first_line(path);
  if (v.empty()) return {{"value", nullptr}, {"meaning", "no Yama (" + path + " absent): classic ptrace rules"}};
  static const char* meanings[] = {
      "classic: a process may attach to any process of its user",
      "restricted: only a parent (or a declared debugger) may attach",
      "admin-only: attaching needs CAP_SYS_PTRACE",
      "disabled: no process may attach"};
  int n = std::atoi(v.c_str());
  return {{"value", n}, {"meaning", n >= 0 && n <= 3 ? meanings[n] : "unknown"}};
}

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

// --- libraries mapped into this process, classified as threadpoolctl does -----------------

struct Known {
  const char* prefix;  // of the file name
  const char* kind;    // openmp | blas | torch | cuda
  const char* family;
};

const Known kKnown[] = {
    {"libgomp", "openmp", "libgomp (GNU)"},
    {"libomp", "openmp", "libomp (LLVM)"},
    {"libiomp", "openmp", "libiomp (Intel)"},
    {"libopenblas", "blas", "OpenBLAS"},
    {"libmkl_rt", "blas", "MKL"},
    {"libmkl_core", "blas", "MKL"},
    {"libblis", "blas", "BLIS"},
    {"libflexiblas", "blas", "FlexiBLAS"},
    {"libblas", "blas", "BLAS"},
    {"libcblas", "blas", "CBLAS"},
    {"libtorch", "torch", "libtorch"},
    {"libc10", "torch", "libtorch"},
    {"libcuda.", "cuda", "CUDA driver"},
    {"libcudart", "cuda", "CUDA runtime"},
};

int collect_path(dl_phdr_info* info, size_t, void* data) {
  if (info->dlpi_name && *info->dlpi_name)
    static_cast<std::vector<std::string>*>(data)->push_back(info->dlpi_name);
  return 0;
}

template <typename Fn>
Fn symbol(void* handle, const char* name) {
  return reinterpret_cast<Fn>(::dlsym(handle, name));
}

// dlsym() on a handle also searches the library's dependencies (libtorch's would answer with
// libgomp's omp_get_max_threads): keep only what the library defines itself.
template <typename Fn>
Fn own_symbol(void* handle, const std::string& path, const char* name) {
  void* p = ::dlsym(handle, name);
  Dl_info info{};
  if (!p || ::dladdr(p, &info) == 0 || !info.dli_fname) return nullptr;
  std::error_code e1, e2;
  if (info.dli_fname != path &&
      std::filesystem::canonical(info.dli_fname, e1) != std::filesystem::canonical(path, e2))
    return nullptr;
  return reinterpret_cast<Fn>(p);
}

// What the library itself says, through the entry points threadpoolctl also uses.
void library_details(void* h, const std::string& path, nlohmann::json& lib) {
  if (auto f = own_symbol<int (*)()>(h, path, "omp_get_max_threads")) lib["max_threads"] = f();
  if (auto f = own_symbol<const char* (*)()>(h, path, "openblas_get_config")) {
    lib["implementation"] = "OpenBLAS";
    lib["version"] = f();
  }
  if (auto f = own_symbol<int (*)()>(h, path, "openblas_get_num_threads")) lib["max_threads"] = f();
  if (auto f = own_symbol<void (*)(char*, int)>(h, path, "MKL_Get_Version_String")) {
    char buf[256] = {};
    f(buf, sizeof buf - 1);
    lib["implementation"] = "MKL";
    lib["version"] = buf;
  }
  if (auto f = own_symbol<int (*)()>(h, path, "MKL_Get_Max_Threads")) lib["max_threads"] = f();
  if (auto f = own_symbol<const char* (*)()>(h, path, "bli_info_get_version_str")) {
    lib["implementation"] = "BLIS";
    lib["version"] = f();
  }
  if (auto f = own_symbol<long (*)()>(h, path, "bli_thread_get_num_threads")) lib["max_threads"] = f();
}

nlohmann::json loaded_libraries() {
  std::vector<std::string> paths;
  ::dl_iterate_phdr(&collect_path, &paths);
  nlohmann::json libs = nlohmann::json::array();
  for (const auto& path : paths) {
    const std::string file = std::filesystem::path(path).filename().string();
    const Known* k = nullptr;
    for (const auto& cand : kKnown)
      if (file.rfind(cand.prefix, 0) == 0) {
        k = &cand;
        break;
      }
    if (!k) continue;
    nlohmann::json lib = {{"kind", k->kind}, {"family", k->family}, {"path", path}};
    std::error_code ec;
    auto real = std::filesystem::canonical(path, ec);
    // The real file tells which alternative a generic name (libblas.so.3) resolves to, and its
    // suffix is the library's own version where it has no API for it (libgomp.so.1.0.0).
    if (!ec && real.string() != path) lib["real_path"] = real.string();
    if (void* h = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD)) {
      library_details(h, path, lib);
      ::dlclose(h);
    }
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
  void* h = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return {{"driver", nullptr}, {"summary", "no CUDA driver (libcuda.so.1 not found)"}};
  // The driver stays loaded: unloading it mid-process is not supported.
  using CuInit = int (*)(unsigned);
  using CuIntOut = int (*)(int*);
  using CuDeviceGet = int (*)(int*, int);
  using CuDeviceGetName = int (*)(char*, int, int);
  using CuDeviceTotalMem = int (*)(size_t*, int);
  using CuDeviceGetAttribute = int (*)(int*, int, int);
  auto init = symbol<CuInit>(h, "cuInit");
  auto driver_version = symbol<CuIntOut>(h, "cuDriverGetVersion");
  auto count = symbol<CuIntOut>(h, "cuDeviceGetCount");
  auto get = symbol<CuDeviceGet>(h, "cuDeviceGet");
  auto name = symbol<CuDeviceGetName>(h, "cuDeviceGetName");
  auto mem = symbol<CuDeviceTotalMem>(h, "cuDeviceTotalMem_v2");
  auto attr = symbol<CuDeviceGetAttribute>(h, "cuDeviceGetAttribute");
  if (!init || !driver_version || !count || !get || !name)
    return {{"driver", "libcuda.so.1"}, {"summary", "libcuda.so.1 lacks the driver API entry points"}};
  nlohmann::json cuda = {{"driver", "libcuda.so.1"}};
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

}  // namespace

bool register_environment_contributor(EnvironmentContributor fn) {
  contributors().push_back(fn);
  return true;
}

nlohmann::json collect_environment(const std::string& program) {
  nlohmann::json env = {
      {"collected_by", {{"program", program}, {"pid", ::getpid()}}},
      {"os", os_facts()},
      {"libc", {{"name", "glibc"}, {"version", gnu_get_libc_version()},
                {"release", gnu_get_libc_release()}}},
      {"compiler", compiler()},
      {"cpus", cpu_facts()},
      // POSIX has all three; spawn and forkserver are forkcheck's own (repros/launch).
      {"start_methods", {"fork", "spawn", "forkserver"}},
      {"ptrace_scope", ptrace_scope()},
      {"variables", relevant_variables()},
  };
  for (auto* fn : contributors()) fn(env);
  env["cuda"] = cuda_facts();
  env["libraries"] = loaded_libraries();

  // The default thread counts a case starts with.
  nlohmann::json threads = env.value("threads", nlohmann::json::object());
  threads["nproc"] = env["cpus"]["affinity"].is_null() ? env["cpus"]["online"] : env["cpus"]["affinity"];
  for (const auto& lib : env["libraries"])
    if (lib["kind"] == "openmp" && lib.contains("max_threads") && !threads.contains("omp_get_max_threads"))
      threads["omp_get_max_threads"] = lib["max_threads"];
  env["threads"] = threads;

  nlohmann::json omp = nlohmann::json::array(), blas = nlohmann::json::array();
  for (const auto& lib : env["libraries"]) {
    const std::string file = std::filesystem::path(lib.value("real_path", lib.value("path", ""))).filename().string();
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
