// The three ways Launcher::start starts a worker (Launcher has checked the name already).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "launch/launch.h"

namespace fc::launch::detail {

using StartTime = std::chrono::steady_clock::time_point;

std::unique_ptr<Worker::Impl> start_fork(const std::string& name, WorkerFn fn,
                                         const nlohmann::json& payload, StartTime started);
std::unique_ptr<Worker::Impl> start_spawn(const std::string& name, const std::string& payload_text,
                                          StartTime started);
std::unique_ptr<Worker::Impl> start_forkserver_worker(const std::string& name,
                                                      const std::string& payload_text,
                                                      StartTime started);

// In a child forked from a client of the forkserver: closes the inherited control socket, so
// the child neither keeps the server alive nor writes into the parent's request stream.
void forkserver_forget_inherited() noexcept;

}  // namespace fc::launch::detail
