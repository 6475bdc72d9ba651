#include "harness/python_facts/python_torch.h"

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <system_error>

#include "harness/platform/host.h"
#include "harness/supervise/supervisor.h"

namespace fc::harness {
namespace {

namespace fs = std::filesystem;

// Locates the package without importing it (no libtorch load, no CUDA init): a line per fact.
constexpr const char* kFindTorch =
    "import importlib.util as u\n"
    "s = u.find_spec('torch')\n"
    "print('forkcheck-torch-dir: ' + (list(s.submodule_search_locations or [''])[0] if s else "
    "''))\n";

std::string real(const fs::path& p) {
  std::error_code ec;
  const fs::path c = fs::canonical(p, ec);
  return ec ? "" : c.string();
}

}  // namespace

nlohmann::json parse_torch_version_py(const std::string& text) {
  nlohmann::json facts = nlohmann::json::object();
  // `name = 'value'` or `name: Optional[str] = 'value'` (newer wheels annotate them).
  static const std::regex assign(R"(^\s*([A-Za-z_]+)\s*(?::\s*[^=]+)?=\s*(.*?)\s*$)");
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l)) {
    std::smatch m;
    if (!std::regex_match(l, m, assign)) continue;
    std::string key = m[1], value = m[2];
    if (key == "__version__") key = "version";
    if (key != "version" && key != "cuda" && key != "git_version" && key != "debug") continue;
    if (value == "None") {
      facts[key] = nullptr;
    } else if (value == "True" || value == "False") {
      facts[key] = value == "True";
    } else if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') &&
               value.back() == value.front()) {
      facts[key] = value.substr(1, value.size() - 2);
    }
  }
  return facts;
}

nlohmann::json find_python_torch(const std::string& python) {
  const bool has_dir = fs::path(python).has_parent_path();
  const std::string interpreter = has_dir ? python : find_in_path(python);
  std::string why;
  if (interpreter.empty()) return {{"status", "no-python"}, {"error", "no " + python + " in PATH"}};
  if (!is_executable_file(interpreter, why))
    return {{"status", "no-python"}, {"error", interpreter + ": " + why}};
  LaunchSpec spec;
  spec.argv = {interpreter, "-c", kFindTorch};
  spec.env = {{"PYTHONDONTWRITEBYTECODE", "1"}};
  spec.timeout_s = 10;
  spec.grace_s = 0.5;
  spec.channel = false;
  spec.collect_stacks = false;
  spec.capture_cap = 64 * 1024;
  const ChildResult r = supervise(spec);
  const std::string out = r.out.text();
  const std::string mark = "forkcheck-torch-dir: ";
  const auto at = out.rfind(mark);
  if (!r.started || !r.exit.exited_ok() || at == std::string::npos)
    return {{"interpreter", interpreter},
            {"status", "failed"},
            {"error", r.started ? r.exit.describe() : r.start_error}};
  std::string dir = out.substr(at + mark.size());
  dir = dir.substr(0, dir.find('\n'));
  if (dir.empty()) return {{"interpreter", interpreter}, {"status", "no-torch"}};
  nlohmann::json found = {{"interpreter", interpreter}, {"status", "found"}, {"package_dir", dir}};
  std::ifstream version(fs::path(dir) / "version.py");
  std::stringstream text;
  text << version.rdbuf();
  const nlohmann::json version_facts = parse_torch_version_py(text.str());
  for (const auto& [k, v] : version_facts.items()) found[k] = v;
  for (const char* name : {"libtorch_cpu.so", "libtorch_cpu.dylib", "torch_cpu.dll"})
    if (const std::string lib = real(fs::path(dir) / "lib" / name); !lib.empty()) {
      found["libtorch_cpu"] = lib;
      break;
    }
  return found;
}

}  // namespace fc::harness
