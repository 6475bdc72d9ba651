// Smoke test of selfplay-pipeline's queue on Windows (repros/cases/record_queue.cc over Winsock,
// cross-built by ci/check-win32-cross.sh and run under wine), with actors in processes started
// the Windows way:
//   1. two actors started before the writer exists wait for its port file, connect, and send 20
//      messages each (every fifth 1 MiB): the writer gets all 40, whole and in each actor's order,
//      and both ends;
//   2. an actor whose writer never comes gives up at its 0.5 s deadline, naming the port file;
//   3. an actor whose connection closes in the middle of a message: the writer reports it at
//      once, after the whole message before it (not a hang, not an end);
//   4. a writer that hears nothing gives up after its 0.5 s of silence, saying how many ends came.
// Usage: record_queue_smoke                    runs the checks, starting itself for the actors
//        record_queue_smoke actor FILE INDEX   sends actor INDEX's messages to the writer of FILE
//        record_queue_smoke no-writer FILE     waits 0.5 s for FILE: exit 3 when it did not appear
//        record_queue_smoke cut PORT           sends a message and half of the next to the
//                                              writer on PORT, closes, exits
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cases/loopback.h"
#include "cases/record_queue.h"
#include "launch/win32.h"
#include "smoke_check.h"

namespace {

namespace fs = std::filesystem;
namespace rq = fc::cases::record_queue;
using fc::smoke::check;
using fc::smoke::contains;
using fc::smoke::failures;
using Clock = std::chrono::steady_clock;

constexpr int kMessages = 20;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Message `k` of actor `a`: its header, then bytes that depend on (a, k); every fifth is 1 MiB.
std::string message(int a, int k) {
  std::string m = std::to_string(a) + " " + std::to_string(k) + "\n";
  const std::size_t body = k % 5 == 0 ? (1u << 20) : 100 + static_cast<std::size_t>(k);
  for (std::size_t i = 0; i < body; ++i) m += static_cast<char>('a' + (a * 7 + k * 3 + i) % 26);
  return m;
}

// This program again with `args`, started now; its process handle (empty when it did not start).
fc::launch::win32::Handle start_self(const std::string& args) {
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
int wait_exit(const fc::launch::win32::Handle& process) {
  if (!process) return -1;
  if (::WaitForSingleObject(process.get(), 30000) != WAIT_OBJECT_0) {
    ::TerminateProcess(process.get(), 1);
    return -1;
  }
  DWORD code = 0;
  ::GetExitCodeProcess(process.get(), &code);
  return static_cast<int>(code);
}

// What `w.next()` threw ("" when it returned false), with `got` the messages it returned before.
std::string drain(rq::Writer& w, std::vector<std::string>& got) {
  try {
    std::string m;
    while (w.next(m)) got.push_back(m);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

int child(const std::vector<std::string>& args) {
  const std::string& mode = args[0];
  const std::string& file = args[1];  // the writer's port file; for `cut`, its port
  try {
    if (mode == "actor") {
      const int a = std::stoi(args.at(2));
      rq::Sender s(file);
      for (int k = 0; k < kMessages; ++k) s.send(message(a, k));
      return 0;
    }
    if (mode == "no-writer") {
      rq::Sender s(file, std::chrono::milliseconds(500));
      return 0;
    }
    if (mode == "cut") {  // a raw connection: a Sender sends whole frames only
      {
        int local = 0;
        auto s = fc::cases::loopback::connect_to("127.0.0.1", std::stoi(file), local);
        fc::cases::loopback::send_all(
            s, rq::frame("a whole one") + rq::frame(std::string(1000, 'x')).substr(0, 504));
      }  // closed here, in the middle of the second message
      ::ExitProcess(0);
    }
  } catch (const std::exception& e) {
    std::printf("   %s: %s\n", mode.c_str(), e.what());
    std::fflush(stdout);
    return 3;
  }
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3) return child(std::vector<std::string>(argv + 1, argv + argc));

  const fs::path dir = fs::temp_directory_path() /
                       ("forkcheck-record-queue-smoke-" + std::to_string(::GetCurrentProcessId()));
  fs::remove_all(dir);
  fs::create_directory(dir);
  const std::string port_file = (dir / "queue.port").string();
  const std::string quoted = "\"" + port_file + "\"";

  {  // 1.
    fc::launch::win32::Handle actors[] = {start_self("actor " + quoted + " 0"),
                                          start_self("actor " + quoted + " 1")};
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // they are waiting for the file
    rq::Writer w(port_file, 2, std::chrono::seconds(30));
    std::vector<std::string> got;
    const std::string error = drain(w, got);
    const int code0 = wait_exit(actors[0]), code1 = wait_exit(actors[1]);
    check(code0 == 0 && code1 == 0, "1. two actor processes started before the writer sent",
          "exit " + std::to_string(code0) + ", " + std::to_string(code1));
    check(error.empty() && w.ends() == 2, "1. the writer saw both ends", error);
    check(got.size() == 2 * kMessages, "1. it got all 40 messages", std::to_string(got.size()));
    int next_k[2] = {0, 0}, bad = 0;
    for (const std::string& m : got) {
      int a = -1, k = -1;
      if (std::sscanf(m.c_str(), "%d %d", &a, &k) != 2 || a < 0 || a > 1 || k != next_k[a] ||
          m != message(a, k)) {
        ++bad;
        continue;
      }
      ++next_k[a];
    }
    check(bad == 0, "1. each whole (1 MiB ones too) and in its actor's order",
          std::to_string(bad) + " not");
  }

  {  // 2.
    const auto t0 = Clock::now();
    const int code = wait_exit(start_self("no-writer " + quoted));
    const double s = since(t0);
    check(code == 3, "2. an actor without a writer gives up with an error",
          "exit " + std::to_string(code));
    check(s >= 0.45, "2. ... at its 0.5 s deadline, not before", std::to_string(s) + " s");
  }

  {  // 3.
    rq::Writer w(port_file, 1, std::chrono::seconds(10));
    auto cutter = start_self("cut " + std::to_string(w.port()));
    std::vector<std::string> got;
    const auto t0 = Clock::now();
    const std::string error = drain(w, got);
    const double s = since(t0);
    const int code = wait_exit(cutter);
    check(contains(error, "closed in the middle of a message") &&
              contains(error, "after 500 of a message's 1000 bytes"),
          "3. a connection closed mid-message is an error", error);
    check(got.size() == 1 && got[0] == "a whole one" && w.ends() == 0,
          "3. ... after the whole message before it, and no end counted",
          std::to_string(got.size()) + " messages, " + std::to_string(w.ends()) + " ends");
    check(s < 5.0, "3. ... at once, not at the writer's 10 s of silence", std::to_string(s) + " s");
    check(code == 0, "3. the cutting actor exited", "exit " + std::to_string(code));
  }

  {  // 4.
    rq::Writer w(port_file, 1, std::chrono::milliseconds(500));
    std::vector<std::string> got;
    const auto t0 = Clock::now();
    const std::string error = drain(w, got);
    const double s = since(t0);
    check(contains(error, "heard nothing for 0.5 s; ends from 0 of 1 actors (0 connected)"),
          "4. a writer that hears nothing says so, and how many ends came", error);
    check(s >= 0.45 && s < 5.0, "4. ... after its 0.5 s of silence", std::to_string(s) + " s");
  }

  std::error_code ec;
  fs::remove_all(dir, ec);
  std::printf("%s\n", failures == 0 ? "record_queue_smoke: ok" : "record_queue_smoke: FAILED");
  return failures == 0 ? 0 : 1;
}
