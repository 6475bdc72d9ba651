#include "harness/common/out_dir.h"

#include <fstream>
#include <string>
#include <system_error>

#include "harness/common/usage_error.h"
#include "harness/platform/host.h"

namespace fc::harness {

void prepare_out_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw UsageError("cannot create --out directory " + dir.string() + ": " + ec.message());
  auto probe = dir / (".forkcheck-write-test." + std::to_string(current_process_id()));
  if (!std::ofstream(probe)) throw UsageError("--out directory " + dir.string() + " is not writable");
  std::filesystem::remove(probe, ec);
}

}  // namespace fc::harness
