// objc-initialize-fork's probe on macOS: a class with its own +initialize, made with the plain
// runtime API (no Foundation, no MPS), one extra thread alive at fork, the child's first message
// to the class. See objc_probe.h. Not compiled off Apple platforms (objc_probe_other.cc there).
#include <fcntl.h>
#include <objc/message.h>
#include <objc/runtime.h>
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

#include <forkcheck/launch.h>
#include "cases/support/objc_probe.h"
#include "core/case_registry.h"
#include "core/channel.h"
#include "core/pool.h"

namespace fc::cases::objc_probe {
namespace {

using fc::Outcome;

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

}  // namespace

const char* unavailable_reason() { return nullptr; }

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

}  // namespace fc::cases::objc_probe
