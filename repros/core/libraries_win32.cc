// The libraries (modules) of this process on Windows: the module list, GetModuleHandleW and
// GetProcAddress, which looks only at the module's own exports, LoadLibraryW. See libraries.h.
#include <algorithm>
#include <cctype>
#include <filesystem>

#include "core/libraries.h"
#include "launch/win32.h"

// The module list's header needs <windows.h> first; win32.h is the one place that includes it.
#include <psapi.h>

namespace fc::libraries {
namespace {

namespace win32 = launch::win32;

std::vector<HMODULE> modules() {
  std::vector<HMODULE> list(256);
  for (;;) {
    DWORD needed = 0;
    const DWORD bytes = static_cast<DWORD>(list.size() * sizeof(HMODULE));
    if (!::EnumProcessModules(::GetCurrentProcess(), list.data(), bytes, &needed)) return {};
    if (needed <= bytes) {
      list.resize(needed / sizeof(HMODULE));
      return list;
    }
    list.resize(needed / sizeof(HMODULE) + 16);  // more loaded meanwhile: ask again
  }
}

std::string module_path(HMODULE m) {
  std::wstring buf(MAX_PATH, L'\0');
  for (;;) {
    const DWORD n = ::GetModuleFileNameW(m, buf.data(), static_cast<DWORD>(buf.size()));
    if (n == 0) return {};
    if (n < buf.size()) return win32::narrow(buf.substr(0, n));
    buf.resize(buf.size() * 2);
  }
}

void* as_pointer(FARPROC f) { return reinterpret_cast<void*>(f); }

}  // namespace

std::vector<std::string> loaded() {
  std::vector<std::string> paths;
  const std::vector<HMODULE> list = modules();
  // The first module is the program itself.
  for (size_t i = 1; i < list.size(); ++i)
    if (std::string p = module_path(list[i]); !p.empty()) paths.push_back(std::move(p));
  return paths;
}

std::string file_name_for_matching(const std::string& path) {
  // Windows file names are case-insensitive: VCOMP140.DLL is vcomp140.dll.
  std::string f = std::filesystem::path(win32::widen(path)).filename().u8string();
  std::transform(f.begin(), f.end(), f.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return f;
}

void* own_symbol(const std::string& path, const char* name) {
  HMODULE m = ::GetModuleHandleW(win32::widen(path).c_str());  // no reference taken
  return m != nullptr ? as_pointer(::GetProcAddress(m, name)) : nullptr;
}

void* any_symbol(const char* name) {
  for (HMODULE m : modules())
    if (FARPROC f = ::GetProcAddress(m, name)) return as_pointer(f);
  return nullptr;
}

void* open(const std::string& file, std::string& error) {
  HMODULE m = ::LoadLibraryW(win32::widen(file).c_str());
  if (m == nullptr) error = win32::error_text(::GetLastError());
  return reinterpret_cast<void*>(m);
}

void* symbol(void* library, const char* name) {
  return as_pointer(::GetProcAddress(static_cast<HMODULE>(library), name));
}

}  // namespace fc::libraries
