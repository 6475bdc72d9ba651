// OS handles (a socket's file descriptor) as socket-handle-spawn's serializers meet them: what a
// handle is, as the OS answers, and how multiprocessing hands a duplicate of one to another
// process. POSIX in os_handle_posix.cc; Windows in os_handle_win32.cc, which inspects but does
// not share (Python there duplicates sockets with WSADuplicateSocket, socket.share: not done here).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace fc::cases::os_handle {

// What a handle is: `kind` as the OS reports it ("socket", "pipe", "file", ...), `text` for a
// person ("fd 7, socket inode 12345"), `identity` the same for every duplicate of one open
// socket or file and different between two (POSIX: "st_dev:st_ino"; empty where unknown).
struct Info {
  std::string kind;
  std::string text;
  std::string identity;
};
// Throws std::system_error when `handle` is not open.
Info inspect(std::intptr_t handle);

// Why this platform cannot share a handle with another process; nullptr where it can.
const char* sharing_unavailable_reason();

// The parent's half of multiprocessing.resource_sharer: share() keeps a duplicate of a handle and
// returns a ticket (plain JSON: where to ask, and a key); a process that redeems the ticket gets
// its own duplicate, sent over a Unix socket with SCM_RIGHTS. A ticket is good once. A thread
// serves the requests from construction until destruction, which closes what was never redeemed.
class Sharer {
 public:
  Sharer();  // throws std::system_error; std::logic_error where sharing is not implemented
  ~Sharer();
  Sharer(const Sharer&) = delete;
  Sharer& operator=(const Sharer&) = delete;

  nlohmann::json share(std::intptr_t handle);
  int redeemed() const;  // tickets redeemed so far

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The worker's half: the duplicate a ticket names, now owned by the caller. Throws
// std::runtime_error with what went wrong (unknown key, no descriptor in the answer, ...).
std::intptr_t redeem(const nlohmann::json& ticket);

// Closes a handle this process owns (one redeem() returned that nobody adopted).
void close_handle(std::intptr_t handle);

}  // namespace fc::cases::os_handle
