// A child for the Windows smoke test (supervisor_smoke.cc), one behaviour per argument:
//   ok        writes to stdout and stderr, sends a result on the channel, exits 0
//   exit N    exits with status N
//   crash     an access violation: the process ends with exception code 0xC0000005
//   hang      announces a step on the channel, then waits forever without using CPU
//   sleep     sleeps for a minute, announcing nothing
//   tree      starts `sleep` as a child of its own, prints that child's id, then exits
//   flood N   writes N bytes to stdout
//   env NAME  prints NAME's value
// The channel as a Windows repro program uses it: FORKCHECK_CHANNEL_FD holds a HANDLE value, and
// each JSON line goes out in one WriteFile.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "launch/win32.h"

namespace {

void channel_line(const std::string& line) {
  const char* s = std::getenv("FORKCHECK_CHANNEL_FD");
  if (s == nullptr) return;
  HANDLE h = reinterpret_cast<HANDLE>(static_cast<uintptr_t>(std::strtoull(s, nullptr, 10)));
  const std::string text = line + "\n";
  DWORD n = 0;
  ::WriteFile(h, text.data(), static_cast<DWORD>(text.size()), &n, nullptr);
}

std::string pid() { return std::to_string(::GetCurrentProcessId()); }

int start_sleeper(const char* self) {
  std::wstring line;
  fc::launch::win32::append_argument(line, fc::launch::win32::widen(self));
  fc::launch::win32::append_argument(line, L"sleep");
  STARTUPINFOW si{};
  si.cb = sizeof si;
  PROCESS_INFORMATION pi{};
  if (!::CreateProcessW(nullptr, line.data(), nullptr, nullptr, FALSE, 0, nullptr, nullptr, &si,
                        &pi))
    return 1;
  std::printf("grandchild %lu\n", static_cast<unsigned long>(pi.dwProcessId));
  std::fflush(stdout);
  ::CloseHandle(pi.hThread);
  ::CloseHandle(pi.hProcess);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "ok") {
    std::printf("out-line\n");
    std::fprintf(stderr, "err-line\n");
    channel_line(R"({"ev":"result","pid":)" + pid() + R"(,"outcome":"ok","message":"fine"})");
    return 0;
  }
  if (mode == "exit" && argc > 2) return std::atoi(argv[2]);
  if (mode == "crash") {
    volatile int* nowhere = nullptr;
    *nowhere = 1;
    return 0;
  }
  if (mode == "hang") {
    channel_line(R"({"ev":"step","pid":)" + pid() + R"(,"step":"wait forever","within_s":0.5})");
    ::Sleep(INFINITE);
  }
  if (mode == "sleep") {
    ::Sleep(60000);
    return 0;
  }
  if (mode == "tree") return start_sleeper(argv[0]);
  if (mode == "flood" && argc > 2) {
    const std::string chunk(4096, 'x');
    for (long left = std::atol(argv[2]); left > 0; left -= 4096)
      std::fwrite(chunk.data(), 1, static_cast<size_t>(left < 4096 ? left : 4096), stdout);
    return 0;
  }
  if (mode == "env" && argc > 2) {
    const char* v = std::getenv(argv[2]);
    std::printf("%s=%s\n", argv[2], v ? v : "(unset)");
    return 0;
  }
  std::fprintf(stderr, "smoke_child: unknown mode '%s'\n", mode.c_str());
  return 2;
}
