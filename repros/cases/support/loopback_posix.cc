// loopback.h with BSD sockets, on Linux and macOS alike. Close-on-exec is set right after each
// socket is created (macOS has no SOCK_CLOEXEC, no accept4); a vanished peer is EPIPE, never
// SIGPIPE: MSG_NOSIGNAL where send() has it (Linux), SO_NOSIGPIPE on the socket where not (macOS).
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>
#include <system_error>

#include "cases/support/loopback.h"

namespace fc::cases::loopback {
namespace {

#ifdef MSG_NOSIGNAL
constexpr int kSendFlags = MSG_NOSIGNAL;
void no_sigpipe(int) {}
#else
constexpr int kSendFlags = 0;
void no_sigpipe(int fd) {
  const int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, sizeof on);
}
#endif

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

int fd_of(const Socket& s) { return static_cast<int>(s.get()); }

// A socket we own, set up as every socket here is.
Socket adopt(int fd) {
  Socket s(fd);
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  no_sigpipe(fd);
  return s;
}

int port_of(const sockaddr_in& a) { return ntohs(a.sin_port); }

}  // namespace

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    if (handle_ != -1) ::close(static_cast<int>(handle_));
    handle_ = o.handle_;
    o.handle_ = -1;
  }
  return *this;
}

Socket::~Socket() {
  if (handle_ != -1) ::close(static_cast<int>(handle_));
}

std::string Socket::describe() const { return "fd " + std::to_string(handle_); }

Socket listen_on_loopback(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw_errno("socket");
  Socket s = adopt(fd);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), len) != 0) throw_errno("bind");
  if (::listen(fd, 16) != 0) throw_errno("listen");
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) throw_errno("getsockname");
  port = port_of(a);
  return s;
}

Socket accept_connection(const Socket& listener, int& peer_port) {
  sockaddr_in peer{};
  socklen_t len = sizeof peer;
  const int fd = ::accept(fd_of(listener), reinterpret_cast<sockaddr*>(&peer), &len);
  if (fd < 0) return Socket();
  peer_port = port_of(peer);
  return adopt(fd);
}

Socket connect_to(const std::string& host, int port, int& local_port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw_errno("socket");
  Socket s = adopt(fd);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1)
    throw std::invalid_argument("bad host " + host);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    throw_errno("connect to " + host);
  socklen_t len = sizeof a;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) local_port = port_of(a);
  return s;
}

int local_port_of(const Socket& s) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  if (::getsockname(fd_of(s), reinterpret_cast<sockaddr*>(&a), &len) != 0) return -1;
  return port_of(a);
}

void send_all(const Socket& s, const std::string& text) {
  for (size_t off = 0; off < text.size();) {
    const ssize_t n = ::send(fd_of(s), text.data() + off, text.size() - off, kSendFlags);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno("send");
    off += static_cast<size_t>(n);
  }
}

long receive(const Socket& s, char* buf, std::size_t len) {
  for (;;) {
    const ssize_t n = ::recv(fd_of(s), buf, len, 0);
    if (n < 0 && errno == EINTR) continue;
    return static_cast<long>(n);
  }
}

std::string last_error() { return std::strerror(errno); }

std::vector<bool> wait_readable(const std::vector<const Socket*>& sockets, int timeout_ms) {
  std::vector<pollfd> fds;
  for (const Socket* s : sockets) fds.push_back({fd_of(*s), POLLIN, 0});
  std::vector<bool> ready(sockets.size(), false);
  if (::poll(fds.data(), fds.size(), timeout_ms) <= 0) return ready;  // EINTR: nothing yet
  for (size_t i = 0; i < fds.size(); ++i) ready[i] = fds[i].revents != 0;
  return ready;
}

}  // namespace fc::cases::loopback
