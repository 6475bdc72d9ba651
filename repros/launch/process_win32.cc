// This process on Windows: its path and id, its threads (a Toolhelp snapshot), the C standard's
// signals, the handles spawned workers inherit. No fork(): fork and forkserver are unavailable,
// and what only a fork would use throws std::logic_error. See process.h.
#include <csignal>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include <forkcheck/launch.h>
#include "launch/process.h"
#include "launch/spawn_inherit_win32.h"
#include "launch/win32.h"

// Toolhelp's header needs <windows.h> first; win32.h is the one place that includes it.
#include <tlhelp32.h>

namespace fc::launch {
namespace {

constexpr const char* kNoFork = "Windows has no fork(): only spawn exists there";

std::mutex g_inherit_mu;
std::vector<HANDLE>& inherited() {
  static auto* handles = new std::vector<HANDLE>();  // never destroyed: used until exit
  return *handles;
}

}  // namespace

const char* unavailable_reason(StartMethod m) {
  return m == StartMethod::kSpawn ? nullptr : kNoFork;
}

std::string self_executable_path() {
  std::wstring buf(MAX_PATH, L'\0');
  for (;;) {
    const DWORD n = ::GetModuleFileNameW(nullptr, buf.data(), static_cast<DWORD>(buf.size()));
    if (n == 0) return {};
    if (n < buf.size()) return win32::narrow(buf.substr(0, n));
    buf.resize(buf.size() * 2);  // truncated: long paths exceed MAX_PATH
  }
}

ProcessId current_process_id() { return static_cast<ProcessId>(::GetCurrentProcessId()); }

int thread_count() {
  win32::Handle snapshot(::CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0));
  if (!snapshot) return -1;
  const DWORD self = ::GetCurrentProcessId();
  int n = 0;
  THREADENTRY32 e{};
  e.dwSize = sizeof e;
  for (BOOL ok = ::Thread32First(snapshot.get(), &e); ok; ok = ::Thread32Next(snapshot.get(), &e))
    if (e.th32OwnerProcessID == self) ++n;
  return n > 0 ? n : -1;
}

std::string signal_abbrev(int sig) {
  switch (sig) {
    case SIGINT:
      return "INT";
    case SIGILL:
      return "ILL";
    case SIGFPE:
      return "FPE";
    case SIGSEGV:
      return "SEGV";
    case SIGTERM:
      return "TERM";
    case SIGBREAK:
      return "BREAK";
    case SIGABRT:
      return "ABRT";
    default:
      return std::to_string(sig);
  }
}

std::string signal_description(int sig) {
  switch (sig) {
    case SIGINT:
      return "Interrupt";
    case SIGILL:
      return "Illegal instruction";
    case SIGFPE:
      return "Floating-point exception";
    case SIGSEGV:
      return "Segmentation fault";
    case SIGTERM:
      return "Terminated";
    case SIGBREAK:
      return "Ctrl-Break";
    case SIGABRT:
      return "Aborted";
    default:
      return "signal " + std::to_string(sig);
  }
}

void at_fork(void (*)(), void (*)(), void (*)()) {
  throw std::logic_error(std::string("fork handlers: ") + kNoFork);
}

void* map_fork_shared(std::size_t) {
  throw std::logic_error(std::string("memory shared with fork children: ") + kNoFork);
}

void unmap_fork_shared(void*, std::size_t) {}

void inherit_in_spawned_workers(std::uintptr_t handle) {
  HANDLE h = reinterpret_cast<HANDLE>(handle);
  DWORD flags = 0;
  if (h == nullptr || h == INVALID_HANDLE_VALUE || !::GetHandleInformation(h, &flags)) return;
  // Only an inheritable handle can go into a PROC_THREAD_ATTRIBUTE_HANDLE_LIST.
  if ((flags & HANDLE_FLAG_INHERIT) == 0 &&
      !::SetHandleInformation(h, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT))
    return;
  std::lock_guard<std::mutex> lock(g_inherit_mu);
  for (HANDLE known : inherited())
    if (known == h) return;
  inherited().push_back(h);
}

namespace detail {

std::vector<HANDLE> handles_spawned_workers_inherit() {
  std::lock_guard<std::mutex> lock(g_inherit_mu);
  return inherited();
}

}  // namespace detail
}  // namespace fc::launch
