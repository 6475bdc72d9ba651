#include "cases/support/scratch_dir.h"

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <system_error>

#include "launch/process.h"

namespace fc::cases {

ScratchDir::ScratchDir(const std::string& tag, const std::filesystem::path& base_dir) {
  namespace fs = std::filesystem;
  const fs::path base = base_dir.empty() ? fs::temp_directory_path() : base_dir;
  // create_directory fails on a name that exists, as mkdtemp would: the name is always new.
  const auto salt =
      static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count());
  for (unsigned attempt = 0; attempt < 100; ++attempt) {
    char name[96];
    std::snprintf(name, sizeof name, "forkcheck-%s-%lld-%llx", tag.c_str(),
                  static_cast<long long>(launch::current_process_id()), salt + attempt);
    std::error_code ec;
    if (fs::create_directory(base / name, ec)) {
      path_ = base / name;
      fs::permissions(path_, fs::perms::owner_all, ec);  // mkdtemp's 0700 (POSIX)
      return;
    }
    if (ec) throw std::system_error(ec, "create " + (base / name).string());
  }
  throw std::runtime_error("no new scratch directory in " + base.string() + " after 100 names");
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace fc::cases
