// Smoke test of selfplay-pipeline's queue on Windows (repros/cases/support/record_queue.cc over
// Winsock, cross-built by ci/check-win32-cross.sh and run under wine), with actors in processes
// started the Windows way:
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

#include "../support/record_queue_check.h"
#include "cases/support/loopback.h"
#include "cases/support/record_queue.h"
#include "launch/win32.h"
#include "smoke_check.h"
#include "smoke_process.h"

namespace {

namespace fs = std::filesystem;
namespace rq = fc::cases::record_queue;
using fc::smoke::check;
using fc::smoke::contains;
using fc::smoke::failures;
using fc::smoke::start_self;
using fc::smoke::wait_exit;
using rq::testing::Clock;
using rq::testing::drain;
using rq::testing::message;
using rq::testing::since;

constexpr int kMessages = 20;

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
