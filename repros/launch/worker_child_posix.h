// What runs inside a worker process, for every start method: call the function, write one JSON
// document ({"ok": result} or {"error": message}) to the result fd, flush stdio, _exit.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include <forkcheck/launch.h>

namespace fc::launch::detail {

// Runs `fn` and writes its result; returns the exit code to use (0 returned, 1 threw).
int run_worker(WorkerFn fn, const nlohmann::json& payload, int result_fd) noexcept;
// The same for a worker known by name with its payload as JSON text (spawn, forkserver).
int run_named_worker(const std::string& name, const std::string& payload_text,
                     int result_fd) noexcept;
// Flushes stdio and _exits: a forked child must never run the parent's atexit handlers or
// static destructors.
[[noreturn]] void exit_child(int code) noexcept;

}  // namespace fc::launch::detail
