// objc-initialize-fork (source 000, macOS): the Objective-C runtime refuses to run a class's own
// +initialize in the child of a multi-threaded fork, since it may have been in progress in another
// thread when fork() was called, and crashes the child with a message instead. This is the real
// runtime hazard, built with the plain runtime API (no Foundation, no MPS): a class with its own
// +initialize, one extra thread alive at fork, the child's first message to the class.
//
// Only Apple platforms have that runtime; elsewhere the variants are skipped and static-init-fork
// shows the same hazard (one-time initialisation interrupted by fork) in C++.
#include "core/case_registry.h"
#include "core/pool.h"

#ifdef __APPLE__
#include <objc/message.h>
#include <objc/runtime.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/channel.h"
#include "launch/launch.h"
#endif

namespace {

using fc::Outcome;

#ifdef __APPLE__
constexpr const char* kClassName = "ForkcheckInitializeProbe";

void probe_initialize(id, SEL) {}  // its own +initialize is what the runtime refuses after fork
int probe_ping(id, SEL) { return 42; }

// Function pointers change type through void (*)(void), which no cast warning objects to: IMP and
// objc_msgSend are declared either that way or variadic, depending on the SDK.
template <typename To, typename From>
To function_cast(From f) {
  return reinterpret_cast<To>(reinterpret_cast<void (*)(void)>(f));
}

// The class, created (once per process) with the runtime API. objc_getClass returns id in old
// SDKs and Class in new ones: the cast accepts both.
Class probe_class() {
  if (Class existing = reinterpret_cast<Class>(objc_getClass(kClassName))) return existing;
  Class cls =
      objc_allocateClassPair(reinterpret_cast<Class>(objc_getClass("NSObject")), kClassName, 0);
  Class meta = object_getClass(reinterpret_cast<id>(cls));
  class_addMethod(meta, sel_registerName("initialize"), function_cast<IMP>(&probe_initialize),
                  "v@:");
  class_addMethod(meta, sel_registerName("ping"), function_cast<IMP>(&probe_ping), "i@:");
  objc_registerClassPair(cls);
  return cls;
}

FORKCHECK_WORKER(objc_message_probe) {
  // The runtime's message goes to stderr just before it crashes: keep a copy for the parent.
  const std::string log = payload.at("stderr_file").get<std::string>();
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (fd >= 0) ::dup2(fd, STDERR_FILENO);
  Class cls = probe_class();
  auto send = function_cast<int (*)(id, SEL)>(&objc_msgSend);
  const int answer =
      send(reinterpret_cast<id>(cls), sel_registerName("ping"));  // +initialize first
  return {{"pid", getpid()}, {"ping", answer}};
}

fc::CaseResult run(const fc::VariantSpec& variant) {
  probe_class();  // registered in the parent, never messaged there: +initialize has not run
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::thread extra([&] {  // the parent must be multi-threaded at fork for the runtime to check
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done; });
  });
  const std::string log = (std::filesystem::temp_directory_path() /
                           ("forkcheck-objc-" + std::to_string(getpid()) + ".log"))
                              .string();
  const char* disabled = std::getenv("OBJC_DISABLE_INITIALIZE_FORK_SAFETY");
  nlohmann::json details = {{"class", kClassName},
                            {"parent_threads_at_fork", fc::launch::thread_count()},
                            {"OBJC_DISABLE_INITIALIZE_FORK_SAFETY", disabled ? disabled : ""}};
  auto workers = fc::start_pool(variant, "objc_message_probe", {{{"stderr_file", log}}});
  auto pool = fc::join_pool(workers, std::chrono::seconds(20));
  {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
  }
  cv.notify_all();
  extra.join();
  std::stringstream text;
  text << std::ifstream(log).rdbuf();
  ::unlink(log.c_str());
  const std::string said = text.str();
  std::fputs(said.c_str(), stderr);  // the harness's capture shows it too
  details["child_stderr"] = said;
  const std::string marker =
      "initialize] may have been in progress in another thread when fork() was called";
  details["runtime_message_seen"] = said.find(marker) != std::string::npos;
  if (pool.outcome == Outcome::kCrash && details["runtime_message_seen"] == true)
    pool.message += "; the runtime said: " + said.substr(0, said.find('\n'));
  return fc::to_case_result(std::move(pool), details);
}
#else
fc::CaseResult run(const fc::VariantSpec&) {
  return {Outcome::kSkip, "needs macOS's Objective-C runtime", nlohmann::json::object()};
}
#endif

std::vector<fc::VariantSpec> variants() {
  std::vector<fc::VariantSpec> v = {
      fc::hazard("fork", "fork", Outcome::kCrash,
                 "the runtime's atfork child handler marks a child of a multi-threaded parent; "
                 "there, a class with its own +initialize that has not completed is not "
                 "initialised but _objc_fatal()s (abort)",
                 "a class with its own +initialize, registered but never messaged in the "
                 "parent; one extra thread alive at fork; the child messages the class"),
      fc::hazard(
          "fork-disable-fork-safety", "fork", Outcome::kOk,
          "OBJC_DISABLE_INITIALIZE_FORK_SAFETY=YES, read when the process starts, turns "
          "the check off: the child runs +initialize and the message is gone. A "
          "workaround, not a fix: whatever another thread's +initialize was doing at fork "
          "is still half done in the child",
          "as `fork`, with OBJC_DISABLE_INITIALIZE_FORK_SAFETY=YES in the environment from exec")
          .with_env("OBJC_DISABLE_INITIALIZE_FORK_SAFETY", "YES"),
      fc::fix("spawn", "spawn", "a fresh exec is not a fork child: +initialize runs normally",
              "same parent; the worker is a fresh exec that creates the class and messages it"),
  };
#ifndef __APPLE__
  for (auto& s : v)
    s.skip(
        "needs macOS's Objective-C runtime (libobjc), which this platform does not have; "
        "static-init-fork is its analogue here (one-time initialisation interrupted by fork)");
#endif
  return v;
}

}  // namespace

FORKCHECK_CASE(objc_initialize_fork_case) {
  fc::CaseDef c;
  c.id = "objc-initialize-fork";
  c.title = "macOS: a class's +initialize in the child of a multi-threaded fork crashes";
  c.source_title = "PyTorchのマルチプロセス学習でハマったところ";
  c.source_author = "M・W (Mynavi AI戦略室)";
  c.source_doc = "000";
  c.reported =
      "objc[8623]: +[MPSGraphObject initialize] may have been in progress in another thread when "
      "fork() was called. We cannot safely call it or ignore it in the fork() child process. "
      "Crashing instead. Set a breakpoint on objc_initializeAfterForkError to debug. "
      "`export OBJC_DISABLE_INITIALIZE_FORK_SAFETY=YES` hides it, a workaround; spawn avoids it.";
  c.mechanism =
      "objc4: _objc_atfork_child sets MultithreadedForkChild when the parent had threads at fork "
      "(unless OBJC_DISABLE_INITIALIZE_FORK_SAFETY was set at start-up). In such a child, "
      "initializeNonMetaClass hands a not-yet-initialised class to performForkChildInitialize, "
      "which skips a trivial +initialize but _objc_fatal()s for a class with its own.";
  c.platforms = "macOS (Objective-C runtime)";
  c.variants = &variants;
  c.run = &run;
  return c;
}
