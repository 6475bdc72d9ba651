// The shared libraries of this process, as each OS's loader has them: which are mapped (the
// evidence of which OpenMP runtime, BLAS or CUDA driver a case really ran with), a symbol one of
// them defines, and loading one at run time (the CUDA driver, which the build never links).
// Siblings: libraries_posix.cc (dlopen/dlsym, Linux and macOS), libraries_linux.cc
// (dl_iterate_phdr), libraries_mac.cc (dyld's image list), libraries_win32.cc (the module list,
// LoadLibraryW and GetProcAddress).
#pragma once

#include <string>
#include <vector>

namespace fc::libraries {

// Every shared library mapped into this process (not the program itself), as the loader names
// it: a path (Linux, macOS) or a module's file name with its directory (Windows).
std::vector<std::string> loaded();

// The file name of `path`, lower-cased where file names are case-insensitive (Windows, macOS),
// for comparing with prefixes such as "libgomp" or "vcomp".
std::string file_name_for_matching(const std::string& path);

// The address of `name` when the library `path` (one of loaded()) defines it itself, not one of
// its dependencies; nullptr when it does not, or is not loaded.
void* own_symbol(const std::string& path, const char* name);

// The address of `name` in whichever loaded library defines it first (dlsym's RTLD_DEFAULT;
// Windows: each module in load order); nullptr when none does.
void* any_symbol(const char* name);

// Loads a library by file name as the OS searches for it, and keeps it loaded; nullptr with
// `error` set when it cannot be.
void* open(const std::string& file, std::string& error);
// A symbol of a library open() returned; nullptr when it has none.
void* symbol(void* library, const char* name);

// A function pointer from the void* these return.
template <typename Fn>
Fn as_function(void* p) {
  return reinterpret_cast<Fn>(p);
}

}  // namespace fc::libraries
