#include "harness/common/out_dir.h"

#include <ctime>
#include <fstream>
#include <string>
#include <system_error>

#include "harness/common/usage_error.h"
#include "harness/platform/host.h"

namespace fc::harness {
namespace {

namespace fs = std::filesystem;

// kReportsRoot/latest -> `dir`'s name, replaced atomically (a link made beside it, renamed over
// it); where links cannot be made (Windows without the privilege), kReportsRoot/LATEST names it.
void point_latest_at(const fs::path& dir) {
  const fs::path root = dir.parent_path();
  const fs::path tmp = root / (".latest." + std::to_string(current_process_id()));
  std::error_code ec;
  fs::remove(tmp, ec);
  fs::create_directory_symlink(dir.filename(), tmp, ec);
  if (!ec) {
    fs::rename(tmp, root / "latest", ec);  // replaces a link, never a real folder of that name
    if (!ec) return;
    fs::remove(tmp, ec);
  }
  std::ofstream(root / "LATEST") << dir.filename().string() << "\n";
}

}  // namespace

fs::path choose_out_dir(const fs::path& given, const std::string& command) {
  if (!given.empty()) return given;
  const std::time_t t = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&t));
  const std::string base = command + "-" + stamp;
  fs::path dir = kReportsRoot / base;
  std::error_code ec;
  for (int n = 2; fs::exists(dir, ec) && n < 1000; ++n)
    dir = kReportsRoot / (base + "-" + std::to_string(n));
  return dir;
}

void prepare_out_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw UsageError("cannot create --out directory " + dir.string() + ": " + ec.message());
  auto probe = dir / (".forkcheck-write-test." + std::to_string(current_process_id()));
  if (!std::ofstream(probe))
    throw UsageError("--out directory " + dir.string() + " is not writable");
  fs::remove(probe, ec);
  if (dir.parent_path() == kReportsRoot) point_latest_at(dir);
}

}  // namespace fc::harness
