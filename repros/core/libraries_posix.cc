// Loading and symbol lookup with dlopen/dlsym, the same on Linux and macOS. See libraries.h.
#include <dlfcn.h>

#include <filesystem>

#include "core/libraries.h"

namespace fc::libraries {

void* own_symbol(const std::string& path, const char* name) {
  void* h = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (h == nullptr) return nullptr;
  // dlsym() on a handle also searches the library's dependencies (libtorch's would answer with
  // libgomp's omp_get_max_threads): keep only what the library defines itself.
  void* p = ::dlsym(h, name);
  Dl_info info{};
  void* own = nullptr;
  if (p != nullptr && ::dladdr(p, &info) != 0 && info.dli_fname != nullptr) {
    std::error_code e1, e2;
    if (info.dli_fname == path ||
        std::filesystem::canonical(info.dli_fname, e1) == std::filesystem::canonical(path, e2))
      own = p;
  }
  ::dlclose(h);  // RTLD_NOLOAD took a reference: give it back (the library stays loaded)
  return own;
}

void* any_symbol(const char* name) { return ::dlsym(RTLD_DEFAULT, name); }

void* open(const std::string& file, std::string& error) {
  void* h = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = ::dlerror();
    error = e != nullptr ? e : "dlopen failed";
  }
  return h;
}

void* symbol(void* library, const char* name) { return ::dlsym(library, name); }

}  // namespace fc::libraries
