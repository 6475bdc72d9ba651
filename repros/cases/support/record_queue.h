// selfplay-pipeline's queue from many actor processes to one writer process, one implementation
// for every OS: loopback TCP (cases/loopback.h), since Windows has no datagram AF_UNIX sockets.
// The writer listens on 127.0.0.1, on a port the OS picks, and publishes that port in a file
// (written aside, then renamed: a reader never sees half of it). Each actor waits for the file,
// connects, and sends messages as length-prefixed frames on its own connection, so one message
// never mixes with another actor's. An actor's connection closed after a whole frame is that
// actor's end; one closed mid-frame is an error. Neither end leaves a wait unbounded. No torch.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <string>
#include <vector>

#include "cases/support/loopback.h"

namespace fc::cases::record_queue {

// The largest message either end accepts: a frame header announcing more is garbage.
constexpr std::size_t kMaxMessage = 64u << 20;

// The one writer's end.
class Writer {
 public:
  // Listens, then publishes the port in `port_file`. `actors`: how many actor ends make the
  // queue finished. `silence`: how long next() waits with nothing arriving before it gives up.
  Writer(std::string port_file, int actors,
         std::chrono::milliseconds silence = std::chrono::seconds(20));
  ~Writer();  // removes the port file
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // The next message (from any actor, each actor's in the order it sent them) into `message`;
  // false once all `actors` ends came and every message before them was returned. Throws
  // std::runtime_error: nothing arrived for `silence` (saying how many ends came, and a failed
  // accept if there was one), a connection that broke or closed in the middle of a frame, a frame
  // larger than kMaxMessage.
  bool next(std::string& message);

  int port() const { return port_; }
  int connections() const { return connections_; }  // actors that connected so far
  int ends() const { return ends_; }                // of them, those that closed after a frame

 private:
  struct Connection {
    loopback::Socket socket;
    int peer_port = 0;
    std::string pending;  // bytes received, not yet a whole frame
  };
  bool accept_one();  // false when accept failed (accept_error_ says why)
  // Reads what `c` has; false at its end (EOF after a whole frame). Throws as next() does.
  bool read_from(Connection& c);

  std::string port_file_;
  int actors_;
  std::chrono::milliseconds silence_;
  loopback::Socket listener_;
  int port_ = 0;
  std::vector<Connection> open_;
  std::deque<std::string> ready_;  // whole messages not yet returned
  int connections_ = 0, ends_ = 0;
  std::string accept_error_;
};

// An actor's end. Its connection closes with the object: that is the actor's end.
class Sender {
 public:
  // Waits at most `wait` for the writer's `port_file`, then connects. Throws std::runtime_error
  // naming the file when it did not appear in time, or when the connect failed.
  explicit Sender(const std::string& port_file,
                  std::chrono::milliseconds wait = std::chrono::seconds(20));

  // Sends one message, all of it, as one frame; blocks while the writer's buffers are full.
  // Throws when the writer is gone, or for a message larger than kMaxMessage.
  void send(const std::string& message);

  // Ends this actor's part: the writer counts it once it has read everything before it.
  // The destructor does the same.
  void close() { socket_ = loopback::Socket(); }

 private:
  int port_ = 0;
  loopback::Socket socket_;
};

// The frame of `message` as it goes on the wire: 4 bytes of length (little-endian), the bytes.
std::string frame(const std::string& message);

}  // namespace fc::cases::record_queue
