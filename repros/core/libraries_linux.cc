// The libraries mapped into this process on Linux: the dynamic linker's list (dl_iterate_phdr).
// See libraries.h.
#include <link.h>

#include <filesystem>

#include "core/libraries.h"

namespace fc::libraries {
namespace {

int collect_path(dl_phdr_info* info, size_t, void* data) {
  // The program itself comes with an empty name, the vDSO with its soname alone.
  if (info->dlpi_name != nullptr && *info->dlpi_name != '\0')
    static_cast<std::vector<std::string>*>(data)->push_back(info->dlpi_name);
  return 0;
}

}  // namespace

std::vector<std::string> loaded() {
  std::vector<std::string> paths;
  ::dl_iterate_phdr(&collect_path, &paths);
  return paths;
}

std::string file_name_for_matching(const std::string& path) {
  return std::filesystem::path(path).filename().string();  // Linux file names: case matters
}

}  // namespace fc::libraries
