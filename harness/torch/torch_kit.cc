#include "harness/torch/torch_kit.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <system_error>
#include <vector>

#include "harness/base/iso_time.h"
#include "harness/platform/folder_lock.h"
#include "harness/platform/host.h"
#include "harness/platform/install_layout.h"
#include "harness/python_facts/python_torch.h"
#include "harness/supervise/supervisor.h"
#include "harness/version.h"
#include "reports/model/report_model_json.h"
#include "reports/torch_cases.h"

namespace fc::harness {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

#if defined(_WIN32)
constexpr const char* kTorchProgramName = "forkcheck-repro-torch.exe";
#else
constexpr const char* kTorchProgramName = "forkcheck-repro-torch";
#endif

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// FNV-1a, 64 bits: a folder name, not a defence against anyone.
std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

// A file's size, "" when it is not there. Not its time: pip gives every file it installs the
// time of the install, and the same torch installed afresh in each CI job is the same build.
std::string file_stamp(const fs::path& p) {
  std::error_code ec;
  const auto size = fs::file_size(p, ec);
  return ec ? "" : std::to_string(size);
}

// The torch package's compiled module (_C.cpython-311-x86_64-linux-gnu.so), its name and size:
// the stamp where the package has no lib/libtorch_cpu (Debian's).
std::string c_module_stamp(const fs::path& package_dir) {
  std::error_code ec;
  for (fs::directory_iterator it(package_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("_C.", 0) == 0 && name.find(".so") != std::string::npos)
      return name + " " + file_stamp(it->path());
  }
  return "";
}

// A tool by name in PATH, else beside the interpreter (a venv's bin/, where `pip install cmake`
// puts it).
std::string find_tool(const std::string& name, const std::string& interpreter) {
  if (std::string found = find_in_path(name); !found.empty()) return found;
  std::string why;
  const fs::path beside = fs::path(interpreter).parent_path() / name;
  return !interpreter.empty() && is_executable_file(beside.string(), why) ? beside.string() : "";
}

// nvcc, which a CUDA torch's CMake package needs (its Caffe2Config.cmake stops without the CUDA
// toolkit): in PATH, $CUDA_HOME/bin, $CUDA_PATH/bin or /usr/local/cuda/bin.
std::string find_nvcc() {
  if (std::string found = find_in_path("nvcc"); !found.empty()) return found;
  std::vector<fs::path> dirs;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) dirs.emplace_back(fs::path(v) / "bin");
  dirs.emplace_back("/usr/local/cuda/bin");
  std::string why;
  for (const auto& d : dirs)
    if (is_executable_file((d / "nvcc").string(), why)) return (d / "nvcc").string();
  return "";
}

// The C++ compiler CMake would pick: $CXX (a path or a name, with no arguments), else c++, g++,
// clang++ in PATH.
std::string find_compiler(std::string& looked) {
  if (const char* cxx = std::getenv("CXX"); cxx && *cxx) {
    looked = std::string("$CXX (") + cxx + ")";
    std::string why;
    if (fs::path(cxx).has_parent_path()) return is_executable_file(cxx, why) ? cxx : "";
    return find_in_path(cxx);
  }
  looked = "c++, g++ and clang++ in PATH";
  for (const char* name : {"c++", "g++", "clang++"})
    if (std::string found = find_in_path(name); !found.empty()) return found;
  return "";
}

// The most recent build recorded in `folder`'s builds: how long it took, on what, for which torch.
json last_build(const fs::path& folder) {
  json best;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const json built = json::parse(read_file(it->path() / "built.json"), nullptr, false);
    if (!built.is_object() || !built.contains("build_s") || !built["build_s"].is_number()) continue;
    if (best.is_null() || built.value("built_at", "") > best.value("built_at", "")) best = built;
  }
  return best;
}

// What torch_cases() finds: the facts every state has, then the program or why there is none.
struct Found {
  TorchCases cases;
  fs::path kit, key_dir;
  std::string cmake, compiler, ninja, interpreter;
};

Found find() {
  Found f;
  json& facts = f.cases.facts;
  if (kTorchProgramBuilt) {
    const PartLookup dir = find_repro_dir();
    f.cases.program =
        ((dir.found.empty() ? dir.looked.back() : dir.found) / kTorchProgramName).string();
    facts = {{"source", "built-in"}};
    return f;
  }
  facts = {{"source", "none"}, {"cases", json::array()}};
  const PartLookup kit = find_torch_kit();
  if (kit.found.empty()) {
    facts["why"] = "no-kit";
    facts["detail"] = "no torch kit at " + kit.looked_text();
    return f;
  }
  f.kit = kit.found;
  const std::string manifest_text = read_file(kit.found / "manifest.json");
  const json manifest = json::parse(manifest_text, nullptr, false);
  if (manifest.is_object() && manifest.contains("cases") && manifest["cases"].is_array())
    facts["cases"] = manifest["cases"];
  const json torch = find_python_torch("python3");
  facts["python"] = torch.value("interpreter", "python3");
  if (const std::string status = torch.value("status", ""); status != "found") {
    facts["why"] = status == "no-torch" ? "no-torch"
                   : status == "failed" ? "python-failed"
                                        : "no-python";
    facts["detail"] = torch.value("error", "");
    return f;
  }
  f.interpreter = torch.value("interpreter", "");
  facts["torch"] = torch.value("version", json());
  facts["package_dir"] = torch.value("package_dir", "");
  const fs::path folder = torch_builds_folder();
  if (folder.empty()) {
    facts["why"] = "no-cache";
    facts["detail"] = "neither XDG_CACHE_HOME nor HOME is set";
    return f;
  }
  f.key_dir = folder / torch_build_key(torch, kit.found, manifest_text);
  facts["build_dir"] = f.key_dir.string();
  const json built = json::parse(read_file(f.key_dir / "built.json"), nullptr, false);
  std::error_code ec;
  if (built.is_object() && built.contains("program") && built["program"].is_string() &&
      fs::exists(built["program"].get<std::string>(), ec)) {
    f.cases.program = built["program"].get<std::string>();
    facts.update(built);
    facts["source"] = "built-here";
    facts.erase("why");
    return f;
  }
  if (json last = last_build(folder); !last.is_null()) facts["last_build"] = last;
  f.cmake = find_tool("cmake", f.interpreter);
  if (f.cmake.empty()) {
    facts["why"] = "no-cmake";
    facts["detail"] = "no cmake in PATH or beside " + f.interpreter;
    return f;
  }
  std::string looked;
  f.compiler = find_compiler(looked);
  if (f.compiler.empty()) {
    facts["why"] = "no-compiler";
    facts["detail"] = "no C++ compiler: looked for " + looked;
    return f;
  }
  if (const json& cuda = torch.value("cuda", json()); cuda.is_string() && find_nvcc().empty()) {
    facts["why"] = "no-cuda-toolkit";
    facts["detail"] = "that torch is built for CUDA " + cuda.get<std::string>() +
                      ", and its CMake package needs the CUDA toolkit: no nvcc in PATH, "
                      "$CUDA_HOME/bin, $CUDA_PATH/bin or /usr/local/cuda/bin";
    return f;
  }
  f.ninja = find_tool("ninja", f.interpreter);
  facts["why"] = "not-built";
  facts["cmake"] = f.cmake;
  facts["compiler"] = f.compiler;
  facts["jobs"] = std::max(1u, cpu_count());
  return f;
}

std::optional<Found>& memo() {
  static std::optional<Found> found;
  return found;
}

// Runs one step of the build (cmake's configure or build) under the supervisor, its output into
// `log`; progress lines ("[3/9] Building CXX object ...") said on `say` as they come.
ChildResult run_step(const std::vector<std::string>& argv, std::ofstream& log, std::FILE* say,
                     std::chrono::steady_clock::time_point t0) {
  log << "$";
  for (const auto& a : argv) log << " " << a;
  log << "\n";
  log.flush();
  LaunchSpec spec;
  spec.argv = argv;
  spec.timeout_s = 0;  // a compiler is slow, never stuck: no deadline, and Ctrl-C ends it
  spec.channel = false;
  spec.collect_stacks = false;
  spec.capture_cap = 16 * 1024;
  std::string pending;
  static const std::regex progress(R"(^\[\s*\d+(/\d+|%)\]\s.*)");
  spec.on_output = [&](int, const char* data, std::size_t n) {
    log.write(data, static_cast<std::streamsize>(n));
    log.flush();
    pending.append(data, n);
    for (std::size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
      const std::string line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      if (say && std::regex_match(line, progress)) {
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::fprintf(say, "  %s  %s\n", reports::minutes_text(s).c_str(), line.c_str());
        std::fflush(say);
      }
    }
  };
  return supervise(spec);
}

// The lines of a failed step that say why: CMake's and the compiler's errors, else its last lines.
std::string why_failed(const ChildResult& r) {
  if (!r.started) return r.start_error;
  const std::string text = r.out.text() + "\n" + r.err.text();
  std::istringstream in(text);
  std::string line, errors;
  while (std::getline(in, line))
    if (line.find("error") != std::string::npos || line.find("Error") != std::string::npos)
      if (errors.size() < 600) errors += (errors.empty() ? "" : " | ") + line;
  return r.exit.describe() + ": " + (errors.empty() ? r.err.last_lines(3) : errors);
}

}  // namespace

fs::path torch_builds_folder() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return fs::path(xdg) / "forkcheck" / "torch-cases";
  if (const char* home = std::getenv("HOME"); home && *home)
    return fs::path(home) / ".cache" / "forkcheck" / "torch-cases";
  return {};
}

std::string torch_build_key(const json& python_torch, const fs::path& kit,
                            const std::string& kit_manifest) {
  const fs::path package = python_torch.value("package_dir", "");
  // Which interpreter found it is not part of it: a venv's python3 and the one it was made from
  // import the same torch.
  json torch = python_torch;
  torch.erase("interpreter");
  std::string identity = std::string(kVersion) + "\n" + kit.string() + "\n" + kit_manifest + "\n" +
                         package.string() + "\n" + torch.dump() + "\n";
  if (python_torch.contains("libtorch_cpu") && python_torch["libtorch_cpu"].is_string())
    identity += file_stamp(python_torch["libtorch_cpu"].get<std::string>());
  else
    identity += c_module_stamp(package);
  std::string version = python_torch.value("version", "unknown");
  for (char& c : version)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '+') c = '_';
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(identity)));
  return "torch-" + version + "-" + hex;
}

const TorchCases& torch_cases() {
  if (!memo()) memo() = find();
  return memo()->cases;
}

const TorchCases& build_torch_cases(std::FILE* say) {
  torch_cases();
  Found& f = *memo();
  json& facts = f.cases.facts;
  if (facts.value("why", "") != "not-built") return f.cases;

  std::error_code ec;
  fs::create_directories(f.key_dir, ec);
  if (ec) {
    facts["why"] = "failed";
    facts["detail"] = "could not make " + f.key_dir.string() + ": " + ec.message();
    return f.cases;
  }
  // One build per torch at a time: a second forkcheck finds it busy and runs without them.
  // (A forkcheck holds the folder until it exits, a build that failed included.)
  const FolderLock lock = lock_folder(f.key_dir);
  if (lock.result == FolderLock::Result::kBusy) {
    const ProcessId holder = lock.holder;
    memo().reset();  // built by it meanwhile: use it
    if (torch_cases().facts.value("source", "") == "built-here") return memo()->cases;
    memo()->cases.facts["why"] = "busy";
    memo()->cases.facts["detail"] = "another forkcheck (pid " + std::to_string(holder) +
                                    ") holds their build folder: it is building them, or ran on "
                                    "after a build that failed";
    return memo()->cases;
  }
  // Built meanwhile by another forkcheck that has now let go: use it.
  memo().reset();
  if (torch_cases().facts.value("source", "") == "built-here") return memo()->cases;
  Found& g = *memo();
  json& now = g.cases.facts;

  const fs::path build = g.key_dir / "build";
  // A build cut short earlier starts again, and no record of an earlier one outlives it.
  fs::remove(g.key_dir / "built.json", ec);
  fs::remove_all(g.key_dir / "bin", ec);
  fs::remove_all(build, ec);
  const fs::path log_path = g.key_dir / "build.log";
  std::ofstream log(log_path, std::ios::trunc);
  now["log"] = log_path.string();
  if (say) {
    std::fprintf(
        say, "%s\n",
        reports::torch_build_announcement(reports::read_as<reports::TorchCases>(now)).c_str());
    std::fflush(say);
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> configure = {
      g.cmake,
      "-S",
      (g.kit / "src").string(),
      "-B",
      build.string(),
      "-DCMAKE_BUILD_TYPE=Release",
      "-DFORKCHECK_PARTS=torch",
      "-DFORKCHECK_TORCH_FROM_PYTHON=" + g.interpreter,
      "-DFORKCHECK_KIT_INCLUDE_DIR=" + (g.kit / "third_party" / "include").string(),
      "-DCMAKE_CXX_COMPILER=" + g.compiler};
  if (!g.ninja.empty()) {
    configure.push_back("-GNinja");
    configure.push_back("-DCMAKE_MAKE_PROGRAM=" + g.ninja);
  }
  ChildResult r = run_step(configure, log, nullptr, t0);
  if (r.interrupted_by == 0 && r.started && r.exit.exited_ok())
    r = run_step({g.cmake, "--build", build.string(), "--target", "forkcheck-repro-torch", "-j",
                  std::to_string(now.value("jobs", 1))},
                 log, say, t0);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // The program alone is kept (its libtorch is found by absolute RUNPATH): the objects and the
  // precompiled header are hundreds of MB that no later run reads.
  const fs::path program = g.key_dir / "bin" / kTorchProgramName;
  const bool linked = r.interrupted_by == 0 && r.started && r.exit.exited_ok() &&
                      fs::exists(build / "bin" / kTorchProgramName, ec);
  if (linked) {
    fs::create_directories(program.parent_path(), ec);
    fs::rename(build / "bin" / kTorchProgramName, program, ec);
    if (!ec) fs::remove_all(build, ec);
  }
  if (!linked || !fs::exists(program, ec)) {
    now["why"] = r.interrupted_by != 0 ? "interrupted" : "failed";
    now["detail"] = r.interrupted_by != 0 ? ""
                    : linked              ? "the program could not be moved to " + program.string()
                                          : why_failed(r);
    if (r.interrupted_by != 0) fs::remove_all(build, ec);
    if (say) {
      std::fprintf(say, "%s\n",
                   reports::torch_build_done(reports::read_as<reports::TorchCases>(now)).c_str());
      std::fflush(say);
    }
    return g.cases;
  }
  const json built = {
      {"program", program.string()},  {"build_s", took},         {"built_at", now_iso8601()},
      {"jobs", now.value("jobs", 1)}, {"cmake", g.cmake},        {"compiler", g.compiler},
      {"torch", now["torch"]},        {"python", now["python"]}, {"log", log_path.string()}};
  {
    std::ofstream out(g.key_dir / "built.json.tmp", std::ios::trunc);
    out << built.dump(2) << "\n";
  }
  fs::rename(g.key_dir / "built.json.tmp", g.key_dir / "built.json", ec);
  g.cases.program = program.string();
  now.update(built);
  now["source"] = "built-here";
  now["built_now"] = true;
  now.erase("why");
  if (say) {
    std::fprintf(say, "%s\n",
                 reports::torch_build_done(reports::read_as<reports::TorchCases>(now)).c_str());
    std::fflush(say);
  }
  return g.cases;
}

}  // namespace fc::harness
