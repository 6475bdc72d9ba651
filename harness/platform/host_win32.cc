#include <io.h>

#include <cstdio>
#include <cwchar>
#include <filesystem>
#include <string>
#include <system_error>

#include "harness/platform/host.h"
#include "harness/platform/win32.h"

namespace fc::harness {

std::filesystem::path executable_path() {
  std::wstring buf(MAX_PATH, L'\0');
  for (;;) {
    const DWORD n = ::GetModuleFileNameW(nullptr, buf.data(), static_cast<DWORD>(buf.size()));
    if (n == 0) return {};
    if (n < buf.size()) return std::filesystem::path(buf.substr(0, n));
    buf.resize(buf.size() * 2);  // truncated: long paths exceed MAX_PATH
  }
}

ProcessId current_process_id() { return static_cast<ProcessId>(::GetCurrentProcessId()); }

nlohmann::json host_platform() {
  return {{"os", "Windows"},
          {"kernel", launch::win32::windows_version()},
          {"machine", launch::win32::native_machine()},
          {"cpus", ::GetActiveProcessorCount(ALL_PROCESSOR_GROUPS)}};
}

std::string find_in_path(const std::string& name) {
  const std::wstring wname = win32::widen(name);
  std::wstring buf(MAX_PATH, L'\0');
  for (;;) {
    const DWORD n = ::SearchPathW(nullptr, wname.c_str(), L".exe", static_cast<DWORD>(buf.size()),
                                  buf.data(), nullptr);
    if (n == 0) return {};
    if (n < buf.size()) return win32::narrow(buf.substr(0, n));
    buf.resize(n);  // n is the size it needs
  }
}

// Windows has no execute permission bit: whether CreateProcess will run a file is decided by
// what the file is, so an existing regular file is as far as we can check beforehand.
bool is_executable_file(const std::string& path, std::string& why) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::u8path(path);
  if (std::filesystem::is_regular_file(p, ec)) return true;
  why = ec ? ec.message() : std::filesystem::exists(p, ec) ? "not a regular file" : "no such file";
  return false;
}

// Windows shares tensors through its own file mappings (no /dev/shm) and has no descriptor limit
// like RLIMIT_NOFILE; the affinity mask is the process's, within its processor group.
nlohmann::json machine_limits() {
  nlohmann::json affinity = nullptr;
  DWORD_PTR process_mask = 0, system_mask = 0;
  if (::GetProcessAffinityMask(::GetCurrentProcess(), &process_mask, &system_mask)) {
    int count = 0;
    for (; process_mask != 0; process_mask &= process_mask - 1) ++count;
    affinity = count;
  }
  return {{"os", "Windows"},
          {"dev_shm", {{"path", "/dev/shm"}, {"absent", "Windows has none"}}},
          {"open_files", {{"soft", nullptr}, {"hard", nullptr}}},
          {"cpus",
           {{"online", ::GetActiveProcessorCount(ALL_PROCESSOR_GROUPS)},
            {"affinity", affinity},
            {"cgroup_quota", nullptr}}}};
}

double load_average() { return -1; }  // Windows keeps no load average

unsigned cpu_count() {
  SYSTEM_INFO info{};
  ::GetSystemInfo(&info);
  return info.dwNumberOfProcessors > 0 ? info.dwNumberOfProcessors : 1;
}

std::vector<std::pair<std::string, std::string>> environment_variables() {
  std::vector<std::pair<std::string, std::string>> vars;
  wchar_t* block = ::GetEnvironmentStringsW();
  if (block == nullptr) return vars;
  for (const wchar_t* e = block; *e; e += std::wcslen(e) + 1) {
    const std::wstring entry = e;
    const size_t eq = entry.find(L'=', 1);  // "=C:=C:\dir": a drive's directory, not a variable
    if (eq == std::wstring::npos || entry[0] == L'=') continue;
    vars.emplace_back(win32::narrow(entry.substr(0, eq)), win32::narrow(entry.substr(eq + 1)));
  }
  ::FreeEnvironmentStringsW(block);
  return vars;
}

}  // namespace fc::harness

namespace fc::harness {

bool is_terminal(int stream) { return _isatty(_fileno(stream == 1 ? stdout : stderr)) != 0; }

// Windows has no poll on a console or pipe handle: written through the C library.
std::size_t write_what_fits(int stream, const char* data, std::size_t n) {
  std::FILE* f = stream == 1 ? stdout : stderr;
  const std::size_t done = std::fwrite(data, 1, n, f);
  std::fflush(f);
  return done;
}

}  // namespace fc::harness
