#include "harness/platform/install_layout.h"

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

#include "harness/install_dirs.h"
#include "harness/platform/host.h"

namespace fc::harness {
namespace {

namespace fs = std::filesystem;

bool is_there(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

// The first candidate that exists; `env` (when set and non-empty) is the only candidate.
PartLookup first_existing(const char* env, std::vector<fs::path> candidates) {
  PartLookup lookup;
  if (const char* value = std::getenv(env); value && *value) candidates = {fs::path(value)};
  for (auto& c : candidates) {
    c = c.lexically_normal();
    lookup.looked.push_back(c);
    if (lookup.found.empty() && is_there(c)) lookup.found = c;
  }
  return lookup;
}

}  // namespace

std::string PartLookup::looked_text() const {
  std::string text;
  for (const auto& p : looked) text += (text.empty() ? "" : ", ") + p.string();
  return text;
}

fs::path own_directory() {
  const fs::path self = executable_path();
  std::error_code ec;
  return self.empty() ? fs::current_path(ec) : self.parent_path();
}

PartLookup find_repro_dir() {
  if (const char* value = std::getenv("FORKCHECK_REPRO_DIR"); value && *value)
    return first_existing("FORKCHECK_REPRO_DIR", {});
    // A folder counts when it holds the native program (every build has it).
#if defined(_WIN32)
  const char* native = "forkcheck-repro.exe";
#else
  const char* native = "forkcheck-repro";
#endif
  const fs::path bin = own_directory();
  PartLookup lookup;
  for (const fs::path& dir : {bin, (bin / install_dirs::kReproFromBin).lexically_normal()}) {
    lookup.looked.push_back(dir);
    if (lookup.found.empty() && is_there(dir / native)) lookup.found = dir;
  }
  return lookup;
}

PartLookup find_watch_shim_file(const std::string& file_name) {
  const fs::path bin = own_directory();
  return first_existing("FORKCHECK_WATCH_SHIM",
                        {bin.parent_path() / "lib" / file_name,
                         bin / install_dirs::kShimFromBin / file_name, bin / file_name});
}

PartLookup find_report_schema() {
  const fs::path bin = own_directory();
  return first_existing("FORKCHECK_SCHEMA",
                        {bin / install_dirs::kDataFromBin / "report.schema.json"});
}

}  // namespace fc::harness

namespace fc::harness {

// A data folder under <bin>/../share/forkcheck (or `env`), found only when it holds `marker`.
static PartLookup data_folder_with(const char* env, const char* folder, const char* marker) {
  PartLookup lookup = first_existing(env, {own_directory() / install_dirs::kDataFromBin / folder});
  if (!lookup.found.empty() && !is_there(lookup.found / marker)) lookup.found.clear();
  return lookup;
}

PartLookup find_torch_kit() {
  return data_folder_with("FORKCHECK_TORCH_KIT", "torch-kit", "manifest.json");
}

PartLookup find_python_bootstrap() {
  return data_folder_with("FORKCHECK_PY_BOOTSTRAP", "python", "sitecustomize.py");
}

std::string python_bytecode_folder() {
  namespace fs = std::filesystem;
  fs::path folder;
  if (const char* given = std::getenv("FORKCHECK_PY_BYTECODE"); given && *given)
    folder = given;
  else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    folder = fs::path(xdg) / "forkcheck" / "python";
  else if (const char* home = std::getenv("HOME"); home && *home)
    folder = fs::path(home) / ".cache" / "forkcheck" / "python";
  else
    return "";
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec || !fs::is_directory(folder, ec)) return "";
  // Code the interpreter runs: nobody else's to write.
  fs::permissions(folder, fs::perms::owner_all, fs::perm_options::replace, ec);
  return folder.string();
}

}  // namespace fc::harness
