// How a payload that may hold an OS handle travels to a fresh process, the two ways Python's
// picklers treat a socket (socket-handle-spawn):
//   RefusingSerializer  pickle / cloudpickle (SB3's CloudpickleWrapper): walks the payload and
//                       refuses the first OS handle it meets, naming what the OS says it is
//                       (Python: "TypeError: cannot pickle 'socket' object").
//   DupFdReducer        multiprocessing's ForkingPickler, which registers a reducer for sockets:
//                       each handle becomes a ticket that the worker redeems (load()) for a
//                       duplicate descriptor of the same open socket (os_handle::Sharer).
// A payload is JSON in which an OS handle sits as os_handle(h): the object graph as it is in
// memory, before anything has been made to travel.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "cases/support/os_handle.h"

namespace fc::cases::handle_payload {

// The place of an OS handle in a payload, and how to recognise and read one.
nlohmann::json os_handle(std::intptr_t handle);
bool is_os_handle(const nlohmann::json& value);
std::intptr_t handle_of(const nlohmann::json& value);  // throws std::invalid_argument

class Serializer {
 public:
  virtual ~Serializer() = default;
  virtual std::string name() const = 0;
  // `payload` as plain JSON that can travel to a fresh process; throws launch::NotSerializable
  // when it cannot.
  virtual nlohmann::json dump(const nlohmann::json& payload) = 0;
};

class RefusingSerializer final : public Serializer {
 public:
  std::string name() const override { return "cloudpickle-like"; }
  nlohmann::json dump(const nlohmann::json& payload) override;
};

class DupFdReducer final : public Serializer {
 public:
  std::string name() const override { return "multiprocessing-like"; }
  nlohmann::json dump(const nlohmann::json& payload) override;
  int redeemed() const { return sharer_.redeemed(); }

 private:
  os_handle::Sharer sharer_;  // serves the tickets until this reducer is gone
};

// In the worker: `wire` with every ticket redeemed, each handle back as os_handle(fd), which the
// caller now owns. Throws std::runtime_error when a ticket cannot be redeemed.
nlohmann::json load(const nlohmann::json& wire);

}  // namespace fc::cases::handle_payload
