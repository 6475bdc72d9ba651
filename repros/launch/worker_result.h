// The one JSON document a worker sends back on its result pipe, whatever started it and on
// whatever platform: {"ok": what the function returned} or {"error": why there is nothing}.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include <forkcheck/launch.h>

namespace fc::launch::detail {

struct WorkerResult {
  std::string document;
  int exit_code = 0;  // the worker process's exit code: 0 when the function returned, 1 otherwise
};

// Runs `fn` on `payload` and serializes what came of it. Never throws.
WorkerResult run_worker_function(WorkerFn fn, const nlohmann::json& payload) noexcept;
// The same for a worker known by name, with its payload as JSON text (spawn, forkserver).
WorkerResult run_worker_by_name(const std::string& name, const std::string& payload_text) noexcept;

}  // namespace fc::launch::detail
