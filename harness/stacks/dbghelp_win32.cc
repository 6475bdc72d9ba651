// Stacks of a hung tree on Windows, with dbghelp (part of Windows; no debugger to install): each
// thread of each process in the job is suspended just while its context is read and its stack
// walked with StackWalk64, whose unwinder reads the x64 unwind tables every PE image carries (no
// frame pointers needed); its frames are named after it resumes, from the symbols dbghelp finds
// (PDB files beside the images or on _NT_SYMBOL_PATH; where there are none, the images' exports).
// A frame without a name still says which module it is in. The tree is killed next.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "harness/platform/win32.h"
#include "harness/stacks/stacks.h"
// dbghelp.h and tlhelp32.h after windows.h (harness/platform/win32.h), which they need.
#include <dbghelp.h>
#include <tlhelp32.h>

namespace fc::harness {
namespace {

using win32::Handle;
using win32::narrow;

constexpr int kMaxFrames = 64;

std::string hex(DWORD64 v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// The thread's name where Windows has one (SetThreadDescription, Windows 10 1607 and later),
// looked up at run time so that older systems still load forkcheck.
std::string thread_name(HANDLE thread) {
  using GetDescription = HRESULT(WINAPI*)(HANDLE, PWSTR*);
  static const auto get = reinterpret_cast<GetDescription>(reinterpret_cast<void*>(
      ::GetProcAddress(::GetModuleHandleW(L"kernel32.dll"), "GetThreadDescription")));
  if (get == nullptr) return "";
  PWSTR text = nullptr;
  if (FAILED(get(thread, &text)) || text == nullptr) return "";
  std::string name = narrow(text);
  ::LocalFree(text);
  return name;
}

// One frame as the other platforms show it: the function, and where (file:line, or the module).
// `pc` of a caller frame is its return address: the call is the byte before it.
StackFrame describe(HANDLE process, DWORD64 pc, bool caller) {
  StackFrame f;
  const DWORD64 at = caller ? pc - 1 : pc;
  alignas(SYMBOL_INFO) char buf[sizeof(SYMBOL_INFO) + MAX_SYM_NAME];
  auto* sym = reinterpret_cast<SYMBOL_INFO*>(buf);
  sym->SizeOfStruct = sizeof(SYMBOL_INFO);
  sym->MaxNameLen = MAX_SYM_NAME;
  DWORD64 displacement = 0;
  f.function =
      ::SymFromAddr(process, at, &displacement, sym) ? function_name_only(sym->Name) : "??";
  IMAGEHLP_LINE64 line{};
  line.SizeOfStruct = sizeof line;
  DWORD column = 0;
  IMAGEHLP_MODULE64 module{};
  module.SizeOfStruct = sizeof module;
  if (::SymGetLineFromAddr64(process, at, &column, &line) && line.FileName != nullptr)
    f.where = "at " + std::string(line.FileName) + ":" + std::to_string(line.LineNumber);
  else if (::SymGetModuleInfo64(process, at, &module))
    f.where = "from " + std::string(module.ImageName[0] ? module.ImageName : module.ModuleName);
  else
    f.where = "at " + hex(pc);
  return f;
}

#if defined(_M_X64) || defined(__x86_64__)
constexpr bool kCanWalk = true;
// The program counters of one suspended thread's frames. Empty when its context could not be read.
std::vector<DWORD64> walk(HANDLE process, HANDLE thread) {
  CONTEXT ctx{};  // DECLSPEC_ALIGN(16) in winnt.h, as GetThreadContext needs on x64
  ctx.ContextFlags = CONTEXT_FULL;
  if (!::GetThreadContext(thread, &ctx)) return {};
  STACKFRAME64 frame{};
  frame.AddrPC.Offset = ctx.Rip;
  frame.AddrPC.Mode = AddrModeFlat;
  frame.AddrFrame.Offset = ctx.Rbp;
  frame.AddrFrame.Mode = AddrModeFlat;
  frame.AddrStack.Offset = ctx.Rsp;
  frame.AddrStack.Mode = AddrModeFlat;
  std::vector<DWORD64> pcs;
  while (pcs.size() < kMaxFrames &&
         ::StackWalk64(IMAGE_FILE_MACHINE_AMD64, process, thread, &frame, &ctx, nullptr,
                       ::SymFunctionTableAccess64, ::SymGetModuleBase64, nullptr)) {
    if (frame.AddrPC.Offset == 0) break;
    pcs.push_back(frame.AddrPC.Offset);
  }
  return pcs;
}
#else
constexpr bool kCanWalk = false;  // ARM64 and x86 contexts are not walked yet
std::vector<DWORD64> walk(HANDLE, HANDLE) { return {}; }
#endif

// The ids of every thread of `pids`, from one snapshot of the system's threads, by process.
std::vector<std::pair<DWORD, DWORD>> thread_ids(const std::vector<ProcessId>& pids) {
  std::vector<std::pair<DWORD, DWORD>> ids;  // (pid, tid)
  Handle snap(::CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0));
  if (!snap) return ids;
  THREADENTRY32 te{};
  te.dwSize = sizeof te;
  for (BOOL more = ::Thread32First(snap.get(), &te); more; more = ::Thread32Next(snap.get(), &te))
    for (const ProcessId pid : pids)
      if (te.th32OwnerProcessID == static_cast<DWORD>(pid))
        ids.emplace_back(te.th32OwnerProcessID, te.th32ThreadID);
  return ids;
}

// A symbol session on one process, ended on every way out.
class SymbolSession {
 public:
  explicit SymbolSession(HANDLE process) : process_(process) {
    // TRUE: load the process's modules now, so every frame knows its module.
    ok_ = ::SymInitialize(process_, nullptr, TRUE) != FALSE;
    error_ = ::GetLastError();
  }
  ~SymbolSession() { ::SymCleanup(process_); }  // also after a failed SymInitialize: harmless
  SymbolSession(const SymbolSession&) = delete;
  SymbolSession& operator=(const SymbolSession&) = delete;
  bool ok() const { return ok_; }
  DWORD error() const { return error_; }

 private:
  HANDLE process_;
  bool ok_ = false;
  DWORD error_ = 0;
};

// A suspended thread, resumed on every way out (the walk only: naming happens after).
class Suspension {
 public:
  explicit Suspension(HANDLE thread)
      : thread_(thread), ok_(::SuspendThread(thread) != static_cast<DWORD>(-1)) {}
  ~Suspension() {
    if (ok_) ::ResumeThread(thread_);
  }
  Suspension(const Suspension&) = delete;
  Suspension& operator=(const Suspension&) = delete;
  bool ok() const { return ok_; }

 private:
  HANDLE thread_;
  bool ok_;
};

}  // namespace

Stacks collect_stacks(const std::vector<ProcessId>& pids, double time_limit_s,
                      const std::function<bool()>& give_up) {
  Stacks s;
  // FORKCHECK_STACKS=none, as on POSIX; dbghelp is the only method here, so a POSIX one asked
  // for (eu-stack, gdb, proc) is named in the note as not available.
  const char* env = std::getenv("FORKCHECK_STACKS");
  const std::string wanted = env ? env : "";
  if (wanted == "none") {
    s.method = "none";
    s.note = "FORKCHECK_STACKS=none: stacks were not taken";
    return s;
  }
  if (!kCanWalk) {
    s.method = "none";
    s.note = "forkcheck walks x64 stacks only: this build's architecture is not walked yet";
    return s;
  }
  s.method = "dbghelp";
  // The supervisor waits for this (dbghelp is single-threaded, so it runs in the supervisor's one
  // loop): past the time limit, or once interrupted, frames keep their addresses without names
  // (symbol loading is the slow part), and threads not reached yet are left out.
  using Steady = std::chrono::steady_clock;
  const auto deadline = Steady::now() + std::chrono::duration_cast<Steady::duration>(
                                            std::chrono::duration<double>(time_limit_s));
  auto out_of_time = [&] { return Steady::now() > deadline || give_up(); };
  ::SymSetOptions(SYMOPT_UNDNAME | SYMOPT_DEFERRED_LOADS | SYMOPT_LOAD_LINES |
                  SYMOPT_FAIL_CRITICAL_ERRORS | SYMOPT_NO_PROMPTS);
  const auto threads = thread_ids(pids);
  std::string problems;
  bool cut_short = false;
  for (const ProcessId pid : pids) {
    const DWORD id = static_cast<DWORD>(pid);
    Handle process(::OpenProcess(PROCESS_QUERY_INFORMATION | PROCESS_VM_READ, FALSE, id));
    if (!process) {
      problems += " pid " + std::to_string(pid) + ": OpenProcess failed (error " +
                  std::to_string(::GetLastError()) + ");";
      continue;
    }
    SymbolSession symbols(process.get());
    if (!symbols.ok()) {
      problems += " pid " + std::to_string(pid) + ": SymInitialize failed (error " +
                  std::to_string(symbols.error()) + ");";
      continue;
    }
    for (const auto& [owner, tid] : threads) {
      if (owner != id) continue;
      if (out_of_time()) {
        cut_short = true;
        break;
      }
      Handle thread(::OpenThread(
          THREAD_SUSPEND_RESUME | THREAD_GET_CONTEXT | THREAD_QUERY_LIMITED_INFORMATION, FALSE,
          tid));
      if (!thread) {
        problems += " tid " + std::to_string(tid) + ": OpenThread failed (error " +
                    std::to_string(::GetLastError()) + ");";
        continue;
      }
      ThreadStack t;
      t.pid = static_cast<int>(pid);
      t.tid = static_cast<int>(tid);
      t.name = thread_name(thread.get());
      std::vector<DWORD64> pcs;
      {
        Suspension suspended(thread.get());
        if (suspended.ok())
          pcs = walk(process.get(), thread.get());
        else
          t.state = "not suspended";
      }
      for (size_t i = 0; i < pcs.size(); ++i) {
        if (out_of_time()) {
          cut_short = true;
          t.frames.push_back({"??", "at " + hex(pcs[i])});
        } else {
          t.frames.push_back(describe(process.get(), pcs[i], i > 0));
        }
      }
      s.threads.push_back(std::move(t));
    }
    if (cut_short) break;
  }
  s.note =
      "dbghelp StackWalk64 of every thread of the job's processes; names from the symbols dbghelp "
      "found (PDB files, or the images' exports), else the module";
  if (!wanted.empty() && wanted != "dbghelp")
    s.note += "; FORKCHECK_STACKS=" + wanted + " is not available on Windows (dbghelp or none)";
  char limit[64];
  std::snprintf(limit, sizeof limit, " the %.0f s time limit or an interrupt came first;",
                time_limit_s);
  if (cut_short)
    problems += std::string(" cut short (addresses without names, threads left out):") + limit;
  if (!problems.empty()) s.note += ";" + problems.substr(0, problems.size() - 1);
  if (s.threads.empty()) {
    s.method = "none";
    s.note = "dbghelp read no thread of the hung tree" +
             (problems.empty() ? std::string(": none was found in the job's processes")
                               : ":" + problems.substr(0, problems.size() - 1));
  }
  return s;
}

// What the OS says without walking: nothing beyond what collect_stacks reads.
std::vector<ThreadStack> proc_threads(ProcessId) { return {}; }
std::string syscall_name(long nr) { return "syscall " + std::to_string(nr); }

}  // namespace fc::harness
