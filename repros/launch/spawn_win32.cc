// spawn on Windows: CreateProcessW of this very program (GetModuleFileNameW), or of the program
// Launcher::spawn_program named, with
//   --fc-worker NAME --fc-payload-fd N --fc-result-fd M
// the same command line as on POSIX, except that N and M are not file descriptors but the decimal
// values of two inherited pipe HANDLEs: the payload pipe's read end and the result pipe's write
// end. Exactly those two, the standard handles and those the program named with
// inherit_in_spawned_workers() are inherited (PROC_THREAD_ATTRIBUTE_HANDLE_LIST), so a worker
// never holds a sibling's pipes. The worker shares its parent's stdout and stderr, as
// a spawned Python worker does. init() on the other side reads the payload to EOF, runs the worker
// and writes its result document.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "launch/spawn_inherit_win32.h"
#include "launch/start_methods.h"
#include "launch/worker_impl_win32.h"
#include "launch/worker_result.h"

namespace fc::launch {
namespace {

using win32::Handle;

constexpr const char* kWorkerFlag = "--fc-worker";
constexpr const char* kPayloadFdFlag = "--fc-payload-fd";
constexpr const char* kResultFdFlag = "--fc-result-fd";
constexpr DWORD kPipeBuffer = 64 * 1024;

// Set by init(): a program that never calls it would, when spawned, run its whole main() again
// instead of the worker (and might spawn again, and again).
std::atomic<bool> g_init_called{false};

[[noreturn]] void throw_last_error(const std::string& what) {
  throw std::runtime_error(what + ": " + win32::error_text(::GetLastError()));
}

std::wstring self_exe() {
  std::wstring buf(MAX_PATH, L'\0');
  for (;;) {
    const DWORD n = ::GetModuleFileNameW(nullptr, buf.data(), static_cast<DWORD>(buf.size()));
    if (n == 0) throw_last_error("GetModuleFileName");
    if (n < buf.size()) return buf.substr(0, n);
    buf.resize(buf.size() * 2);  // truncated: long paths exceed MAX_PATH
  }
}

// A program named without its extension (as POSIX names them) gets ".exe".
std::wstring program_file(const std::string& program) {
  std::wstring w = win32::widen(program);
  std::error_code ec;
  if (!std::filesystem::exists(w, ec) && !std::filesystem::path(w).has_extension()) w += L".exe";
  return w;
}

// An inheritable duplicate of one of our standard handles, or nothing when there is none.
Handle inheritable_copy(DWORD which) {
  HANDLE h = ::GetStdHandle(which);
  HANDLE copy = nullptr;
  if (h == nullptr || h == INVALID_HANDLE_VALUE ||
      !::DuplicateHandle(::GetCurrentProcess(), h, ::GetCurrentProcess(), &copy, 0, TRUE,
                         DUPLICATE_SAME_ACCESS))
    return Handle();
  return Handle(copy);
}

// Writes all of `text`; stops early, silently, when the reader is gone.
void write_all(HANDLE h, const std::string& text) {
  const char* data = text.data();
  size_t left = text.size();
  while (left > 0) {
    DWORD n = 0;
    const DWORD chunk = static_cast<DWORD>(std::min<size_t>(left, 1u << 20));
    if (!::WriteFile(h, data, chunk, &n, nullptr) || n == 0) return;
    data += n;
    left -= n;
  }
}

HANDLE parse_handle(const char* s) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v == 0) return nullptr;
  return reinterpret_cast<HANDLE>(static_cast<uintptr_t>(v));
}

[[noreturn]] void bad_worker_command_line(const char* why) {
  std::fprintf(stderr, "forkcheck: bad worker command line: %s\n", why);
  std::fflush(stderr);
  std::_Exit(2);
}

[[noreturn]] void exit_worker(int code) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(code);  // as a POSIX child does: no static destructors, no atexit handlers
}

}  // namespace

namespace detail {

std::unique_ptr<Worker::Impl> start_spawn(const std::string& name, const std::string& payload_text,
                                          StartTime started, const std::string& program) {
  if (!g_init_called.load()) {
    throw std::logic_error("spawn needs fc::launch::init(argc, argv) first thing in main()");
  }
  const std::wstring exe = program.empty() ? self_exe() : program_file(program);

  HANDLE r = nullptr, w = nullptr;
  if (!::CreatePipe(&r, &w, nullptr, kPipeBuffer)) throw_last_error("CreatePipe");
  Handle payload_read(r), payload_write(w);
  if (!::CreatePipe(&r, &w, nullptr, kPipeBuffer)) throw_last_error("CreatePipe");
  Handle result_read(r), result_write(w);
  for (const Handle* h : {&payload_read, &result_write})
    if (!::SetHandleInformation(h->get(), HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT))
      throw_last_error("SetHandleInformation");
  Handle in = inheritable_copy(STD_INPUT_HANDLE), out = inheritable_copy(STD_OUTPUT_HANDLE),
         err = inheritable_copy(STD_ERROR_HANDLE);
  std::vector<HANDLE> inherited = {payload_read.get(), result_write.get()};
  for (const Handle* h : {&in, &out, &err})
    if (*h) inherited.push_back(h->get());
  // And what the program asked every worker to inherit (the harness's channel, say).
  for (HANDLE h : detail::handles_spawned_workers_inherit()) inherited.push_back(h);

  SIZE_T attr_size = 0;
  ::InitializeProcThreadAttributeList(nullptr, 1, 0, &attr_size);
  std::vector<unsigned char> attr_buf(attr_size);
  auto* attrs = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(attr_buf.data());
  if (!::InitializeProcThreadAttributeList(attrs, 1, 0, &attr_size))
    throw_last_error("InitializeProcThreadAttributeList");
  struct AttrsGuard {
    LPPROC_THREAD_ATTRIBUTE_LIST a;
    ~AttrsGuard() { ::DeleteProcThreadAttributeList(a); }
  } attrs_guard{attrs};
  if (!::UpdateProcThreadAttribute(attrs, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherited.data(),
                                   inherited.size() * sizeof(HANDLE), nullptr, nullptr))
    throw_last_error("UpdateProcThreadAttribute");

  STARTUPINFOEXW si{};
  si.StartupInfo.cb = sizeof si;
  si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
  si.StartupInfo.hStdInput = in.get();
  si.StartupInfo.hStdOutput = out.get();
  si.StartupInfo.hStdError = err.get();
  si.lpAttributeList = attrs;

  std::wstring command_line;
  auto handle_arg = [](const Handle& h) {
    return std::to_wstring(reinterpret_cast<uintptr_t>(h.get()));
  };
  for (const std::wstring& arg :
       {exe, win32::widen(kWorkerFlag), win32::widen(name), win32::widen(kPayloadFdFlag),
        handle_arg(payload_read), win32::widen(kResultFdFlag), handle_arg(result_write)})
    win32::append_argument(command_line, arg);

  PROCESS_INFORMATION pi{};
  // ERROR_INTERNAL_ERROR says nothing about the program or its arguments: a transient failure
  // (wine returns it now and then under load). Tried again twice, a moment apart, before it is
  // the worker's error; any other error is at once.
  bool created = false;
  for (int attempt = 0; attempt < 3 && !created; ++attempt) {
    if (attempt > 0) ::Sleep(50);
    created =
        ::CreateProcessW(exe.c_str(), command_line.data(), nullptr, nullptr, TRUE,
                         EXTENDED_STARTUPINFO_PRESENT, nullptr, nullptr, &si.StartupInfo, &pi) != 0;
    if (!created && ::GetLastError() != ERROR_INTERNAL_ERROR) break;
  }
  if (!created) throw_last_error("spawn " + win32::narrow(exe));
  Handle process(pi.hProcess);
  ::CloseHandle(pi.hThread);

  // Our copies of the worker's ends go, so the worker alone holds them.
  payload_read.reset();
  result_write.reset();
  // If the worker died before reading its payload, its exit code will tell; nothing to add.
  write_all(payload_write.get(), payload_text);
  payload_write.reset();  // EOF: the worker reads until it
  return std::make_unique<Worker::Impl>(name, std::move(process),
                                        static_cast<ProcessId>(pi.dwProcessId),
                                        std::move(result_read), started);
}

}  // namespace detail

void init(int argc, char** argv) {
  g_init_called.store(true);
  if (argc < 2 || std::strcmp(argv[1], kWorkerFlag) != 0) return;
  if (argc != 7 || std::strcmp(argv[3], kPayloadFdFlag) != 0 ||
      std::strcmp(argv[5], kResultFdFlag) != 0) {
    bad_worker_command_line("expected --fc-worker NAME --fc-payload-fd N --fc-result-fd M");
  }
  const std::string name = argv[2];
  HANDLE payload = parse_handle(argv[4]);
  HANDLE result = parse_handle(argv[6]);
  if (payload == nullptr || result == nullptr) bad_worker_command_line("bad handle value");
  // Not inheritable any more: whatever the worker itself starts must not hold our result pipe.
  ::SetHandleInformation(payload, HANDLE_FLAG_INHERIT, 0);
  ::SetHandleInformation(result, HANDLE_FLAG_INHERIT, 0);

  std::string payload_text;
  char buf[65536];
  for (;;) {
    DWORD n = 0;
    if (!::ReadFile(payload, buf, sizeof buf, &n, nullptr)) {
      if (::GetLastError() == ERROR_BROKEN_PIPE) break;  // EOF: the parent closed its end
      std::fprintf(stderr, "forkcheck: reading the worker payload: %s\n",
                   win32::error_text(::GetLastError()).c_str());
      exit_worker(2);
    }
    if (n == 0) break;
    payload_text.append(buf, n);
  }
  ::CloseHandle(payload);

  const detail::WorkerResult r = detail::run_worker_by_name(name, payload_text);
  // If the parent is gone there is no one to tell; the exit code still says what happened.
  write_all(result, r.document);
  ::CloseHandle(result);
  exit_worker(r.exit_code);
}

}  // namespace fc::launch
