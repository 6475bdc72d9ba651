// The Windows smoke programs that need other processes start themselves again, in another mode.
#pragma once

#include <string>

#include "launch/win32.h"

namespace fc::smoke {

// This program again with `args`, started now; its process handle (empty when it did not start).
inline fc::launch::win32::Handle start_self(const std::string& args) {
  char self[MAX_PATH];
  ::GetModuleFileNameA(nullptr, self, MAX_PATH);
  std::string cmd = "\"" + std::string(self) + "\" " + args;
  STARTUPINFOA si{};
  si.cb = sizeof si;
  PROCESS_INFORMATION pi{};
  if (!::CreateProcessA(nullptr, cmd.data(), nullptr, nullptr, FALSE, 0, nullptr, nullptr, &si,
                        &pi))
    return fc::launch::win32::Handle();
  ::CloseHandle(pi.hThread);
  return fc::launch::win32::Handle(pi.hProcess);
}

// Its exit code; -1 when it did not start, or did not exit in 30 s (it is ended then).
inline int wait_exit(const fc::launch::win32::Handle& process) {
  if (!process) return -1;
  if (::WaitForSingleObject(process.get(), 30000) != WAIT_OBJECT_0) {
    ::TerminateProcess(process.get(), 1);
    return -1;
  }
  DWORD code = 0;
  ::GetExitCodeProcess(process.get(), &code);
  return static_cast<int>(code);
}

}  // namespace fc::smoke
