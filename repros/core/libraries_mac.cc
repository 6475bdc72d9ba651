// The libraries mapped into this process on macOS: dyld's image list (system libraries too,
// though they live in the shared cache rather than in files). See libraries.h.
#include <mach-o/dyld.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>

#include "core/libraries.h"

namespace fc::libraries {

std::vector<std::string> loaded() {
  std::vector<std::string> paths;
  const uint32_t n = ::_dyld_image_count();
  for (uint32_t i = 0; i < n; ++i) {
    // Image 0 is the program itself; an image may go away meanwhile (nullptr).
    if (i == 0) continue;
    if (const char* name = ::_dyld_get_image_name(i)) paths.emplace_back(name);
  }
  return paths;
}

std::string file_name_for_matching(const std::string& path) {
  // APFS is case-insensitive by default: libOMP.dylib is libomp.dylib.
  std::string f = std::filesystem::path(path).filename().string();
  std::transform(f.begin(), f.end(), f.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return f;
}

}  // namespace fc::libraries
