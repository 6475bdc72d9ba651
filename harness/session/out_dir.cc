#include "harness/session/out_dir.h"

#include <ctime>
#include <fstream>
#include <string>
#include <system_error>

#include "harness/base/usage_error.h"
#include "harness/platform/folder_lock.h"
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
  const fs::path latest = root / "latest";
  std::error_code ignored;  // a "latest" that does not exist yet is no error
  const fs::file_status st = fs::symlink_status(latest, ignored);
  if (st.type() == fs::file_type::not_found || fs::is_symlink(st)) {
    fs::rename(tmp, latest, ec);  // replaces our link at once; never a file or folder of that name
    if (!ec) return;
  }
  fs::remove(tmp, ec);
  std::ofstream(root / "LATEST") << dir.filename().string() << "\n";
}

}  // namespace

void prepare_out_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw UsageError("cannot create --out directory " + dir.string() + ": " + ec.message());
  // Before anything in it is touched: a live run's folder is its alone.
  const FolderLock lock = lock_folder(dir);
  using Result = FolderLock::Result;
  if (lock.result == Result::kBusy)
    throw UsageError(dir.string() + " is in use by another forkcheck run, still live" +
                     (lock.holder > 0 ? " (pid " + std::to_string(lock.holder) + ")" : "") +
                     ": wait for it to end, or give another --out");
  if (lock.result == Result::kFailed)
    throw UsageError("--out directory " + dir.string() + " is not writable: " + lock.why);
  // kUnsupported: a file system without locks; the run goes on as it did before there were any.
  auto probe = dir / (".forkcheck-write-test." + std::to_string(current_process_id()));
  if (!std::ofstream(probe))
    throw UsageError("--out directory " + dir.string() + " is not writable");
  fs::remove(probe, ec);
}

fs::path make_out_dir(const fs::path& given, const std::string& command) {
  if (!given.empty()) {
    prepare_out_dir(given);
    return given;
  }
  std::error_code ec;
  fs::create_directories(kReportsRoot, ec);
  if (ec) throw UsageError("cannot create " + kReportsRoot.string() + ": " + ec.message());
  const std::time_t t = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&t));
  const std::string base = command + "-" + stamp;
  for (int n = 1; n < 1000; ++n) {
    fs::path dir = kReportsRoot / (n == 1 ? base : base + "-" + std::to_string(n));
    // create_directory says whether this call made it: the folder is this run's alone.
    if (fs::create_directory(dir, ec)) {
      prepare_out_dir(dir);
      point_latest_at(dir);
      return dir;
    }
    if (ec) throw UsageError("cannot create " + dir.string() + ": " + ec.message());
  }
  throw UsageError("cannot make a new folder under " + kReportsRoot.string() + " for " + base);
}

}  // namespace fc::harness
