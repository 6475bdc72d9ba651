// Launcher::start: the checks every start method shares, then the method itself.
#include <cstdio>
#include <iostream>
#include <stdexcept>

#include <forkcheck/launch.h>
#include "launch/start_methods.h"
#include "launch/worker_impl.h"

namespace fc::launch {
namespace {

// spawn and forkserver send the payload as JSON text; fork hands the child the object itself,
// so (as with Python's fork) a payload that cannot be serialized still works there.
std::string serialize_payload(const nlohmann::json& payload) {
  try {
    return payload.dump();
  } catch (const nlohmann::json::exception& e) {
    throw NotSerializable(std::string("cannot serialize the payload: ") + e.what());
  }
}

}  // namespace

Worker Launcher::start(const std::string& worker, const nlohmann::json& payload) const {
  const auto started = std::chrono::steady_clock::now();
  WorkerFn fn = find_worker(worker);
  if (fn == nullptr) throw std::invalid_argument("unknown worker '" + worker + "'");
  // As Python does for every start method: output written before start() comes out before the
  // worker's, and a forked child does not inherit unflushed buffers to write a second time.
  std::cout.flush();
  std::fflush(nullptr);
  switch (method_) {
    case StartMethod::kFork:
      return Worker(detail::start_fork(worker, fn, payload, started));
    case StartMethod::kSpawn:
      return Worker(detail::start_spawn(worker, serialize_payload(payload), started, program_));
    case StartMethod::kForkserver:
      return Worker(detail::start_forkserver_worker(worker, serialize_payload(payload), started));
  }
  throw std::invalid_argument("unknown start method");
}

}  // namespace fc::launch
