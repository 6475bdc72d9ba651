// Smoke test of the torch cases' cross-process lock on Windows
// (repros/cases/support/shared_lock_win32.cc, cross-built by ci/check-win32-cross.sh and run under
// wine): a lock word in a named segment, taken and released across processes started the Windows
// way.
//   1. taken and released in one process;
//   2. held here, a second process waiting for it gives up at its 1 s deadline and names the
//      holder;
//   3. a second process that takes it and exits without releasing it: the next waiter here gets
//      "exited while holding it" at once (not at its 10 s deadline), and the lock is free after.
// Usage: shared_lock_smoke            runs the checks, starting itself for the other processes
//        shared_lock_smoke hold NAME  takes the lock in segment NAME and exits holding it
//        shared_lock_smoke wait NAME  waits 1 s for the lock: exit 3 when it was not free
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "cases/support/shared_memory.h"
#include "launch/win32.h"  // <windows.h>, lean: a unity batch may hold Winsock too
#include "smoke_check.h"
#include "smoke_process.h"

namespace {

using fc::cases::ProcessMutex;
using fc::cases::SharedLock;
using fc::cases::SharedSegment;

using fc::smoke::check;
using fc::smoke::failures;

// Runs this program again with `args`; its exit code (-1: it did not start, or not end in 30 s).
int run_self(const std::string& args, DWORD* pid = nullptr) {
  const auto process = fc::smoke::start_self(args);
  if (pid && process) *pid = ::GetProcessId(process.get());
  return fc::smoke::wait_exit(process);
}

ProcessMutex* lock_in(SharedSegment& seg) { return static_cast<ProcessMutex*>(seg.data()); }

int child(const std::string& mode, const std::string& name) {
  auto seg = SharedSegment::open(name, sizeof(ProcessMutex));
  if (mode == "hold") {
    new SharedLock(lock_in(seg), std::chrono::seconds(5));  // never released: the process exits
    ::ExitProcess(0);
  }
  try {
    SharedLock lock(lock_in(seg), std::chrono::seconds(1));
    return 0;
  } catch (const std::runtime_error& e) {
    std::printf("   wait: %s\n", e.what());
    return 3;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3) return child(argv[1], argv[2]);

  auto seg = SharedSegment::create("lock-smoke", sizeof(ProcessMutex));
  ProcessMutex* m = lock_in(seg);
  fc::cases::init_process_shared_mutex(m);

  {
    SharedLock lock(m, std::chrono::seconds(1));
    check(m->owner.load() == ::GetCurrentProcessId(), "1. the lock word holds this process's pid");
  }
  check(m->owner.load() == 0, "1. released: the lock word is 0 again");

  {
    SharedLock lock(m, std::chrono::seconds(1));
    const auto t0 = std::chrono::steady_clock::now();
    const int code = run_self("wait " + seg.name());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    check(code == 3, "2. a second process waiting for the held lock gives up",
          "exit " + std::to_string(code) + " after " + std::to_string(s) + " s");
    check(s >= 0.9, "2. ... at its 1 s deadline, not before", std::to_string(s) + " s");
  }

  DWORD holder = 0;
  const int code = run_self("hold " + seg.name(), &holder);
  check(code == 0 && m->owner.load() == holder,
        "3. a second process took the lock and exited holding it",
        "exit " + std::to_string(code) + ", owner " + std::to_string(m->owner.load()) +
            ", holder " + std::to_string(holder));
  const auto t0 = std::chrono::steady_clock::now();
  std::string error;
  try {
    SharedLock lock(m, std::chrono::seconds(10));
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  check(error.find("exited while holding it") != std::string::npos &&
            error.find(std::to_string(holder)) != std::string::npos,
        "3. the next waiter is told the holder died", error);
  check(s < 2.0, "3. ... at once, not at its 10 s deadline", std::to_string(s) + " s");
  check(m->owner.load() == 0, "3. and the lock is free again");
  {
    SharedLock lock(m, std::chrono::seconds(1));
    check(true, "3. it can be taken again");
  }

  std::printf("%s\n", failures == 0 ? "shared_lock_smoke: ok" : "shared_lock_smoke: FAILED");
  return failures == 0 ? 0 : 1;
}
