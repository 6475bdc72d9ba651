// The three ways Launcher::start starts a worker (Launcher has checked the name already).
// POSIX: fork_posix.cc, spawn_posix.cc, forkserver_posix.cc. Windows: spawn_win32.cc, and
// no_fork_win32.cc, where fork and forkserver throw std::logic_error.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include <forkcheck/launch.h>

namespace fc::launch::detail {

using StartTime = std::chrono::steady_clock::time_point;

std::unique_ptr<Worker::Impl> start_fork(const std::string& name, WorkerFn fn,
                                         const nlohmann::json& payload, StartTime started);
// `program`: the executable to spawn (it must register `name` and call launch::init); empty:
// this program, as Python's spawn re-runs the same interpreter.
std::unique_ptr<Worker::Impl> start_spawn(const std::string& name, const std::string& payload_text,
                                          StartTime started, const std::string& program);
std::unique_ptr<Worker::Impl> start_forkserver_worker(const std::string& name,
                                                      const std::string& payload_text,
                                                      StartTime started);

// In a child forked from a client of the forkserver: closes the inherited control socket, so
// the child neither keeps the server alive nor writes into the parent's request stream.
void forkserver_forget_inherited() noexcept;

}  // namespace fc::launch::detail
