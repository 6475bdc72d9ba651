// How a process ended, on Windows. Windows has no signals: every process ends with a 32-bit exit
// code, and a crash (an unhandled exception) ends it with the exception's NTSTATUS as that code,
// 0xC0000005 for an access violation. Such codes are told apart from ordinary exit codes and
// recorded the way POSIX records a signal: ExitStatus::signal holds the NTSTATUS (its bits, as an
// int), signal_name() names it, and classify() calls the variant a crash with that name.
// from_wait_status() takes the exit code from GetExitCodeProcess.
//
// What cannot be told apart: MSVC's abort() ends the process with exit code 3 (after SIGABRT's
// handler), the same as exit(3); newer runtimes fail fast instead (STATUS_STACK_BUFFER_OVERRUN).
#include <csignal>
#include <cstdint>
#include <cstdio>

#include "harness/supervise/exit_status.h"

namespace fc::harness {
namespace {

struct Crash {
  uint32_t code;
  const char* name;
  const char* what;
};

constexpr Crash kCrashes[] = {
    {0x80000002u, "STATUS_DATATYPE_MISALIGNMENT", "misaligned data access"},
    {0x80000003u, "STATUS_BREAKPOINT", "breakpoint reached without a debugger"},
    {0xC0000005u, "STATUS_ACCESS_VIOLATION", "access violation"},
    {0xC0000006u, "STATUS_IN_PAGE_ERROR", "in-page I/O error"},
    {0xC000001Du, "STATUS_ILLEGAL_INSTRUCTION", "illegal instruction"},
    {0xC0000025u, "STATUS_NONCONTINUABLE_EXCEPTION", "non-continuable exception"},
    {0xC000008Cu, "STATUS_ARRAY_BOUNDS_EXCEEDED", "array bounds exceeded"},
    {0xC000008Eu, "STATUS_FLOAT_DIVIDE_BY_ZERO", "floating-point division by zero"},
    {0xC0000090u, "STATUS_FLOAT_INVALID_OPERATION", "invalid floating-point operation"},
    {0xC0000091u, "STATUS_FLOAT_OVERFLOW", "floating-point overflow"},
    {0xC0000094u, "STATUS_INTEGER_DIVIDE_BY_ZERO", "integer division by zero"},
    {0xC0000095u, "STATUS_INTEGER_OVERFLOW", "integer overflow"},
    {0xC0000096u, "STATUS_PRIVILEGED_INSTRUCTION", "privileged instruction"},
    {0xC00000FDu, "STATUS_STACK_OVERFLOW", "stack overflow"},
    {0xC0000135u, "STATUS_DLL_NOT_FOUND", "a DLL the program needs was not found"},
    {0xC0000139u, "STATUS_ENTRYPOINT_NOT_FOUND", "a DLL lacks a function the program needs"},
    {0xC0000142u, "STATUS_DLL_INIT_FAILED", "a DLL failed to initialise"},
    {0xC000013Au, "STATUS_CONTROL_C_EXIT", "ended by Ctrl-C"},
    {0xC0000374u, "STATUS_HEAP_CORRUPTION", "heap corruption"},
    {0xC0000409u, "STATUS_STACK_BUFFER_OVERRUN",
     "fail-fast exit (a failed security check, or abort)"},
    {0xC0000417u, "STATUS_INVALID_CRUNTIME_PARAMETER", "invalid parameter to a C runtime function"},
    {0xE06D7363u, "STATUS_CPP_EH_EXCEPTION", "unhandled C++ exception"},
};

const Crash* known_crash(uint32_t code) {
  for (const Crash& c : kCrashes)
    if (c.code == code) return &c;
  return nullptr;
}

// An exception, not an exit code: a known one, or any NTSTATUS of error severity from the
// system (0xC000xxxx); a program's own exit(-1) is 0xFFFFFFFF and stays an exit code.
bool is_crash(uint32_t code) {
  return known_crash(code) != nullptr || (code & 0xFFFF0000u) == 0xC0000000u;
}

std::string hex(uint32_t code) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", static_cast<unsigned>(code));
  return buf;
}

}  // namespace

ExitStatus ExitStatus::from_wait_status(int status) {
  ExitStatus s;
  s.ended = true;
  const auto code = static_cast<uint32_t>(status);
  if (is_crash(code))
    s.signal = status;
  else
    s.code = status;
  return s;
}

std::string signal_name(int sig) {
  // forkcheck's own interruptions use the C runtime's signal numbers (interrupt_win32.cc).
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGILL:
      return "SIGILL";
    case SIGFPE:
      return "SIGFPE";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGTERM:
      return "SIGTERM";
    case SIGBREAK:
      return "SIGBREAK";
    case SIGABRT:
      return "SIGABRT";
    default:
      break;
  }
  const auto code = static_cast<uint32_t>(sig);
  if (const Crash* c = known_crash(code)) return c->name;
  if (is_crash(code)) return "NTSTATUS " + hex(code);
  return "SIG" + std::to_string(sig);
}

std::string ExitStatus::describe() const {
  if (!ended) return "still running";
  if (signal == 0) return "exit status " + std::to_string(code);
  const auto ntstatus = static_cast<uint32_t>(signal);
  const Crash* c = known_crash(ntstatus);
  return "crashed with " + signal_name(signal) + " (" + hex(ntstatus) +
         (c != nullptr ? std::string(": ") + c->what : std::string()) + ")";
}

nlohmann::json ExitStatus::to_json() const {
  nlohmann::json j = {
      {"code", signal == 0 && ended ? nlohmann::json(code) : nlohmann::json()},
      {"signal", signal == 0 ? nlohmann::json() : nlohmann::json(static_cast<uint32_t>(signal))}};
  if (signal != 0) {
    j["signal_name"] = signal_name(signal);  // the NTSTATUS's name: Windows has no signals
    j["core_dumped"] = false;
  }
  return j;
}

}  // namespace fc::harness
