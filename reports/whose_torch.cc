#include "reports/whose_torch.h"

#include "reports/report_view.h"
#include "reports/text.h"

namespace fc::reports {
namespace {

using json = nlohmann::json;

// "1.13.0a0" and "1.13.0" name one release: the numbers before any letter or local part.
std::string release(const std::string& version) {
  std::string r;
  for (char c : version) {
    if ((c < '0' || c > '9') && c != '.') break;
    r += c;
  }
  while (!r.empty() && r.back() == '.') r.pop_back();
  return r;
}

}  // namespace

bool collected_without_torch(const json& collected_by) {
  return collected_by.is_object() && collected_by.value("torch_program", json()) == false;
}

bool built_without_torch(const json& env) {
  return collected_without_torch(member(env, "collected_by"));
}

json catalog_libtorch(const json& env) {
  const json& t = member(env, "libtorch");
  if (!t.is_object()) return nullptr;
  json out = {{"version", field(t, "version")}};
  for (const auto& lib : list(env, "libraries"))
    if (field(lib, "family") == "libtorch" &&
        field(lib, "real_path").find("libtorch_cpu") != std::string::npos) {
      out["library"] = field(lib, "real_path");
      break;
    }
  return out;
}

std::string libtorch_text(const json& libtorch) {
  if (!libtorch.is_object()) return "";
  const std::string library = field(libtorch, "library");
  return field(libtorch, "version", "?") + (library.empty() ? "" : " (" + library + ")");
}

std::string python_torch_sentence(const json& libtorch, const json& python_torch) {
  if (!python_torch.is_object()) return "";
  const std::string status = field(python_torch, "status");
  const std::string who = field(python_torch, "interpreter");
  if (status == "no-python") return field(python_torch, "error") + ": no Python torch to compare";
  if (status == "no-torch") return who + " has no torch module: no Python torch to compare";
  if (status != "found")
    return who + " could not say where its torch is (" + field(python_torch, "error") + ")";
  const std::string version = field(python_torch, "version", "?");
  const std::string cuda = field(python_torch, "cuda");
  std::string s = who + " imports torch " + version + (cuda.empty() ? "" : " (CUDA " + cuda + ")") +
                  " from " + field(python_torch, "package_dir");
  if (!libtorch.is_object()) return s + "; the catalog here has no torch program to compare";
  const std::string mine = field(libtorch, "library"), theirs = field(python_torch, "libtorch_cpu");
  bool same = false;
  std::string how;  // how the two were compared
  if (!mine.empty() && !theirs.empty()) {
    same = mine == theirs;
    how = same ? "the same libtorch_cpu file" : "its libtorch_cpu is " + theirs;
  } else {
    same = release(version) == release(field(libtorch, "version")) && cuda.empty();
    how = "by version alone: one side does not say which libtorch_cpu file it maps";
  }
  if (same) return s + ": the libtorch the catalog ran against (" + how + ")";
  return s + ": another libtorch than the catalog's " + libtorch_text(libtorch) + " (" + how +
         "), so the catalog's verdicts are not about it. Run your own program under it with "
         "`forkcheck matrix -- python3 PROGRAM` or `forkcheck exec`; to run the catalog against "
         "it, build forkcheck with -DFORKCHECK_TORCH_FROM_PYTHON=" +
         who + " (docs/install.md)";
}

}  // namespace fc::reports
