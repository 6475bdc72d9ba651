#include "harness/python_facts/python_probe.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness/base/usage_error.h"
#include "harness/platform/host.h"
#include "harness/supervise/supervisor.h"
#include "reports/text.h"

namespace fc::harness {
namespace {

namespace fs = std::filesystem;

// The probe. It announces each step on stdout before taking it ("forkcheck-probe-step: importing
// torch"), so that a probe past its deadline says where it was, and ends with one line of JSON
// ("forkcheck-probe-result: {...}"), so that whatever else the interpreter prints (a
// sitecustomize, a warning) cannot be mistaken for it. No f-strings: an old interpreter still
// answers. Everything it asks may fail on a broken install: each failure is one line in the
// result, never the end of the probe.
constexpr const char* kScript = R"PY(
import json, os, sys, time
def step(what):
    sys.stdout.write("forkcheck-probe-step: " + what + "\n")
    sys.stdout.flush()
def why(e):
    text = ("%s: %s" % (type(e).__name__, e)).strip()
    return text.splitlines()[0][:300]
def missing(e, name):
    return isinstance(e, ImportError) and getattr(e, "name", None) == name
r = {}
step("reading the interpreter")
import platform
r["python"] = {"version": platform.python_version(),
               "implementation": platform.python_implementation(),
               "executable": sys.executable, "prefix": sys.prefix,
               "debug_build": hasattr(sys, "gettotalrefcount")}
step("asking multiprocessing")
try:
    import multiprocessing
    r["multiprocessing"] = {"default_start_method": multiprocessing.get_start_method(),
                            "start_methods": multiprocessing.get_all_start_methods()}
except Exception as e:
    r["multiprocessing"] = {"error": why(e)}
step("importing numpy")
try:
    import numpy
    r["numpy"] = {"version": str(numpy.__version__)}
except BaseException as e:
    r["numpy"] = {"missing": why(e)} if missing(e, "numpy") else {"error": why(e)}
step("importing torch")
t0 = time.time()
try:
    import torch
except BaseException as e:
    r["torch"] = {"missing": why(e)} if missing(e, "torch") else {"error": why(e)}
else:
    t = {"version": str(torch.__version__),
         "path": os.path.dirname(getattr(torch, "__file__", None) or ""),
         "import_s": round(time.time() - t0, 3)}
    v = getattr(torch, "version", None)
    t["debug"] = bool(getattr(v, "debug", False))
    t["cuda_build"] = getattr(v, "cuda", None)
    t["hip_build"] = getattr(v, "hip", None)
    step("asking torch for its thread counts")
    try:
        t["threads"] = {"intra_op": torch.get_num_threads(),
                        "inter_op": torch.get_num_interop_threads()}
    except Exception as e:
        t["threads_error"] = why(e)
    step("asking torch.__config__")
    try:
        info = torch.__config__.parallel_info()
        t["parallel_info"] = info
        for line in info.splitlines():
            if line.startswith("ATen parallel backend:"):
                t["parallel_backend"] = line.split(":", 1)[1].strip()
            elif line.startswith("OpenMP"):
                t["openmp"] = line.strip()
        t["config"] = torch.__config__.show()
    except Exception as e:
        t["config_error"] = why(e)
    try:
        import torch.multiprocessing
        t["sharing_strategy"] = torch.multiprocessing.get_sharing_strategy()
    except Exception as e:
        t["sharing_strategy_error"] = why(e)
    try:
        with open("/proc/self/maps") as maps:
            names = set()
            for line in maps:
                name = os.path.basename(line.split()[-1]) if "/" in line else ""
                if name.startswith(("libgomp", "libiomp", "libomp")):
                    names.add(name)
        t["openmp_runtimes"] = sorted(names)
    except (OSError, IndexError):
        pass
    step("asking torch about cuDNN")
    try:
        cudnn = torch.backends.cudnn
        t["cudnn"] = cudnn.version() if cudnn.is_available() else None
    except Exception as e:
        t["cudnn"] = None
        t["cudnn_error"] = why(e)
    step("asking torch.cuda (initialises CUDA in this probe)")
    cuda = {"available": False}
    try:
        cuda["available"] = bool(torch.cuda.is_available())
        if cuda["available"]:
            cuda["device_count"] = torch.cuda.device_count()
            cuda["devices"] = []
            for i in range(cuda["device_count"]):
                p = torch.cuda.get_device_properties(i)
                cuda["devices"].append({"index": i, "name": p.name,
                                        "capability": "%d.%d" % (p.major, p.minor),
                                        "memory_bytes": p.total_memory})
    except Exception as e:
        cuda["error"] = why(e)
    t["cuda"] = cuda
    r["torch"] = t
step("done")
sys.stdout.write("forkcheck-probe-result: " + json.dumps(r) + "\n")
sys.stdout.flush()
)PY";

// Whether this interpreter has torch, without importing it (a tenth of a second): its version
// from the package's metadata, "?" when it has none.
constexpr const char* kTorchHereScript = R"PY(
import sys
try:
    import importlib.util
    found = importlib.util.find_spec("torch") is not None
except Exception:
    found = False
if found:
    try:
        from importlib.metadata import version
        v = version("torch")
    except Exception:
        v = "?"
    sys.stdout.write("forkcheck-torch-here: " + v + "\n")
)PY";

constexpr const char* kStep = "forkcheck-probe-step: ";
constexpr const char* kResult = "forkcheck-probe-result: ";

// The first non-empty line of `s`, trimmed, at most 200 bytes.
std::string first_line(const std::string& s) {
  std::istringstream in(s);
  std::string line;
  while (std::getline(in, line)) {
    const size_t a = line.find_first_not_of(" \t\r");
    if (a == std::string::npos) continue;
    const size_t b = line.find_last_not_of(" \t\r");
    line = line.substr(a, b - a + 1);
    return line.size() > 200 ? line.substr(0, 200) + "..." : line;
  }
  return "";
}

// The text after the last line that starts with `marker`, or "" (found: whether there was one).
std::string last_marked(const std::string& out, const std::string& marker, bool& found) {
  found = false;
  std::string value;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(marker, 0) != 0) continue;
    found = true;
    value = line.substr(marker.size());
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n')) value.pop_back();
  }
  return value;
}

ChildResult run_python(const std::string& interpreter, const char* script, double timeout_s) {
  LaunchSpec spec;
  spec.argv = {interpreter, "-c", script};
  // A probe writes nothing: no __pycache__ in the user's site-packages.
  spec.env = {{"PYTHONDONTWRITEBYTECODE", "1"}};
  spec.timeout_s = timeout_s;
  spec.grace_s = 0.5;
  spec.channel = false;
  spec.collect_stacks = false;
  spec.capture_cap = 256 * 1024;
  return supervise(spec);
}

std::string canonical(const std::string& path) {
  std::error_code ec;
  const fs::path c = fs::canonical(path, ec);
  return ec ? path : c.string();
}

// Another interpreter that has torch, among the python3 in PATH and the usual places: {path,
// version}, or null. `skip`: the canonical paths already asked.
nlohmann::json torch_elsewhere(const std::set<std::string>& skip) {
#ifdef _WIN32
  (void)skip;
  return nullptr;
#else
  std::vector<std::string> candidates;
  if (const char* path = std::getenv("PATH")) {
    std::istringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':'))
      if (!dir.empty()) candidates.push_back(dir + "/python3");
  }
  for (const char* p : {"/usr/bin/python3", "/usr/local/bin/python3", "/opt/conda/bin/python3"})
    candidates.push_back(p);
  for (const char* var : {"CONDA_PREFIX", "VIRTUAL_ENV"})
    if (const char* prefix = std::getenv(var); prefix && *prefix)
      candidates.push_back(std::string(prefix) + "/bin/python3");
  if (const char* home = std::getenv("HOME"); home && *home)
    for (const char* d : {"miniconda3", "anaconda3", "miniforge3", "mambaforge"})
      candidates.push_back(std::string(home) + "/" + d + "/bin/python3");
  std::set<std::string> seen = skip;
  for (const auto& c : candidates) {
    std::string why;
    if (!is_executable_file(c, why) || !seen.insert(canonical(c)).second) continue;
    const ChildResult r = run_python(c, kTorchHereScript, 10);
    bool found = false;
    const std::string version = last_marked(r.out.text(), "forkcheck-torch-here: ", found);
    if (found) return {{"interpreter", c}, {"version", version}};
  }
  return nullptr;
#endif
}

}  // namespace

nlohmann::json probe_python(const PythonProbeOptions& options) {
  const std::string& asked = options.python;
  nlohmann::json result = {
      {"asked", options.named_by_user ? "--python " + asked : asked + " on PATH"}};
  const bool has_dir = fs::path(asked).has_parent_path();
  std::string interpreter = has_dir ? asked : find_in_path(asked);
  std::string why;
  if (options.named_by_user) {
    if (interpreter.empty()) throw UsageError("--python " + asked + ": no such program in PATH");
    if (!is_executable_file(interpreter, why)) throw UsageError("--python " + asked + ": " + why);
  } else if (interpreter.empty() || !is_executable_file(interpreter, why)) {
    result["status"] = "no-python";
    result["error"] = interpreter.empty() ? "no " + asked + " in PATH" : interpreter + ": " + why;
    interpreter.clear();
  }

  if (!interpreter.empty()) {
    result["interpreter"] = interpreter;
    const auto t0 = std::chrono::steady_clock::now();
    const ChildResult r = run_python(interpreter, kScript, options.timeout_s);
    result["probe_s"] =
        std::round(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() *
                   100) /
        100;
    const std::string out = r.out.text();
    bool stepped = false, answered = false;
    const std::string step = last_marked(out, kStep, stepped);
    const std::string line = last_marked(out, kResult, answered);
    nlohmann::json facts =
        answered ? nlohmann::json::parse(line, nullptr, false) : nlohmann::json();
    result["status"] = "failed";
    if (r.interrupted_by != 0) {
      result["error"] = "the probe was interrupted: forkcheck got a signal";
    } else if (!r.started) {
      result["error"] = "the probe could not start: " + first_line(r.start_error);
    } else if (r.called_for == TimeCalled::kDeadline) {
      result["status"] = "timed-out";
      result["error"] = "the probe timed out after " + reports::format_tenths(options.timeout_s) +
                        (stepped ? " while " + step : " before it printed anything");
    } else if (facts.is_object()) {
      result["status"] = "ok";
      result.update(facts);
    } else if (answered && r.exit.exited_ok()) {
      result["error"] = "the probe failed: its result line is not a JSON object";
    } else if (!r.exit.exited_ok()) {
      const std::string err = first_line(r.err.last_lines(1));
      result["error"] = "the probe failed (" + r.exit.describe() + ")" +
                        (stepped ? " while " + step : "") + (err.empty() ? "" : ": " + err);
    } else {
      const std::string said = first_line(out);
      result["error"] =
          "the probe failed: the interpreter printed no probe result" +
          (said.empty() ? std::string(" (no output)") : " (its output began: " + said + ")");
    }
  }

  // No torch here: another interpreter that has it is worth naming, never used instead.
  const bool no_torch = result["status"] == "no-python" ||
                        (result.contains("torch") && result["torch"].contains("missing"));
  if (no_torch && options.look_for_torch_elsewhere) {
    std::set<std::string> skip;
    if (!interpreter.empty()) skip.insert(canonical(interpreter));
    if (result.contains("python") && result["python"].contains("executable") &&
        result["python"]["executable"].is_string())
      skip.insert(canonical(result["python"]["executable"].get<std::string>()));
    const nlohmann::json other = torch_elsewhere(skip);
    if (!other.is_null()) {
      result["torch_elsewhere"] = other;
      result["hint"] = other["interpreter"].get<std::string>() + " has torch " +
                       other["version"].get<std::string>() + ": forkcheck env --python " +
                       other["interpreter"].get<std::string>();
    }
  }
  return result;
}

}  // namespace fc::harness
