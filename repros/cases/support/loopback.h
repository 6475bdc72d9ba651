// Loopback TCP for socket-handle-spawn and selfplay-pipeline's queue (record_queue.h), as each OS
// has sockets: BSD sockets on Linux and macOS (loopback_posix.cc), Winsock on Windows
// (loopback_win32.cc). Every socket is close-on-exec (not inherited by spawned workers) and never
// raises SIGPIPE.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fc::cases::loopback {

// Owns one socket (a file descriptor; a Winsock SOCKET) and closes it.
class Socket {
 public:
  Socket() = default;
  explicit Socket(std::intptr_t handle) : handle_(handle) {}
  Socket(Socket&& o) noexcept : handle_(o.handle_) { o.handle_ = -1; }
  Socket& operator=(Socket&& o) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket();

  std::intptr_t get() const { return handle_; }
  explicit operator bool() const { return handle_ != -1; }
  // For a person reading the report: "fd 5" (POSIX), "socket 312" (Windows).
  std::string describe() const;

 private:
  std::intptr_t handle_ = -1;
};

// A socket listening on 127.0.0.1 on a port the OS picks (returned in `port`). Throws
// std::system_error.
Socket listen_on_loopback(int& port);
// The next connection, with the peer's port in `peer_port`; an empty Socket when accept failed.
Socket accept_connection(const Socket& listener, int& peer_port);
// A socket connected to host:port (host: a numeric IPv4 address), with its own port in
// `local_port`. Throws std::system_error (connect) or std::invalid_argument (host).
Socket connect_to(const std::string& host, int port, int& local_port);
// The local port of a connected socket (getsockname), e.g. of one received from another process;
// -1 when the OS cannot say.
int local_port_of(const Socket& s);

// Sends all of `text`; throws std::system_error when the peer is gone.
void send_all(const Socket& s, const std::string& text);
// recv(): the byte count, 0 at EOF, -1 on an error (an interrupted call is retried).
long receive(const Socket& s, char* buf, std::size_t len);
// The last socket error, as text: what a failed receive() leaves.
std::string last_error();

// Waits at most `timeout_ms` until some of `sockets` can be read (or accept, or saw EOF); true
// for each such socket.
std::vector<bool> wait_readable(const std::vector<const Socket*>& sockets, int timeout_ms);

}  // namespace fc::cases::loopback
