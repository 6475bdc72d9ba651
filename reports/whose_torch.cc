#include "reports/whose_torch.h"

#include "reports/text.h"

namespace fc::reports {
namespace {

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

bool built_without_torch(const Environment& env) {
  return env.collected_by && env.collected_by->torch_program == false;
}

std::optional<CatalogLibtorch> catalog_libtorch(const Environment& env) {
  if (!env.libtorch) return std::nullopt;
  CatalogLibtorch out{env.libtorch->version, ""};
  // The libraries mapped stay as the repro program listed them (rendered as they come).
  if (env.libraries.is_array())
    for (const auto& lib : env.libraries)
      if (field(lib, "family") == "libtorch" &&
          field(lib, "real_path").find("libtorch_cpu") != std::string::npos) {
        out.library = field(lib, "real_path");
        break;
      }
  return out;
}

std::string libtorch_text(const CatalogLibtorch& libtorch) {
  return or_else(libtorch.version, "?") +
         (libtorch.library.empty() ? "" : " (" + libtorch.library + ")");
}

std::string python_torch_sentence(const std::optional<CatalogLibtorch>& libtorch,
                                  const std::optional<EnvPythonTorch>& python_torch) {
  if (!python_torch) return "";
  const EnvPythonTorch& p = *python_torch;
  const std::string& who = p.interpreter;
  if (p.status == "no-python") return p.error + ": no Python torch to compare";
  if (p.status == "no-torch") return who + " has no torch module: no Python torch to compare";
  if (p.status != "found") return who + " could not say where its torch is (" + p.error + ")";
  const std::string version = or_else(p.version, "?");
  std::string s = who + " imports torch " + version +
                  (p.cuda.empty() ? "" : " (CUDA " + p.cuda + ")") + " from " + p.package_dir;
  if (!libtorch) return s + "; the catalog here has no torch program to compare";
  const std::string &mine = libtorch->library, &theirs = p.libtorch_cpu;
  bool same = false;
  std::string how;  // how the two were compared
  if (!mine.empty() && !theirs.empty()) {
    same = mine == theirs;
    how = same ? "the same libtorch_cpu file" : "its libtorch_cpu is " + theirs;
  } else {
    same = release(version) == release(libtorch->version) && p.cuda.empty();
    how = "by version alone: one side does not say which libtorch_cpu file it maps";
  }
  if (same) return s + ": the libtorch the catalog ran against (" + how + ")";
  return s + ": another libtorch than the catalog's " + libtorch_text(*libtorch) + " (" + how +
         "), so the catalog's verdicts are not about it. Run your own program under it with "
         "`forkcheck matrix -- python3 PROGRAM` or `forkcheck exec`; to run the catalog against "
         "it, build forkcheck with -DFORKCHECK_TORCH_FROM_PYTHON=" +
         who + " (docs/install.md)";
}

}  // namespace fc::reports
