// loopback.h with Winsock. Sockets are created not inheritable (WSA_FLAG_NO_HANDLE_INHERIT), so
// spawned workers never hold one; Windows has no SIGPIPE. WSAStartup runs once, on first use.
#include <mutex>
#include <stdexcept>
#include <system_error>

#include "cases/support/loopback.h"
#include "launch/win32.h"

// Winsock after <windows.h>, which win32.h includes lean (so without the old winsock.h).
#include <winsock2.h>
#include <ws2tcpip.h>

namespace fc::cases::loopback {
namespace {

void start_winsock() {
  static std::once_flag once;
  std::call_once(once, [] {
    WSADATA data{};
    if (const int rc = ::WSAStartup(MAKEWORD(2, 2), &data); rc != 0)
      throw std::system_error(rc, std::system_category(), "WSAStartup");
  });
}

[[noreturn]] void throw_wsa(const std::string& what) {
  throw std::runtime_error(what + ": " +
                           launch::win32::error_text(static_cast<DWORD>(::WSAGetLastError())));
}

SOCKET sock_of(const Socket& s) { return static_cast<SOCKET>(s.get()); }

Socket new_socket() {
  start_winsock();
  const SOCKET s = ::WSASocketW(AF_INET, SOCK_STREAM, IPPROTO_TCP, nullptr, 0,
                                WSA_FLAG_OVERLAPPED | WSA_FLAG_NO_HANDLE_INHERIT);
  if (s == INVALID_SOCKET) throw_wsa("socket");
  return Socket(static_cast<std::intptr_t>(s));
}

int port_of(const sockaddr_in& a) { return ntohs(a.sin_port); }

}  // namespace

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    if (handle_ != -1) ::closesocket(static_cast<SOCKET>(handle_));
    handle_ = o.handle_;
    o.handle_ = -1;
  }
  return *this;
}

Socket::~Socket() {
  if (handle_ != -1) ::closesocket(static_cast<SOCKET>(handle_));
}

std::string Socket::describe() const { return "socket " + std::to_string(handle_); }

Socket listen_on_loopback(int& port) {
  Socket s = new_socket();
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int len = sizeof a;
  if (::bind(sock_of(s), reinterpret_cast<sockaddr*>(&a), len) != 0) throw_wsa("bind");
  if (::listen(sock_of(s), 16) != 0) throw_wsa("listen");
  if (::getsockname(sock_of(s), reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw_wsa("getsockname");
  port = port_of(a);
  return s;
}

Socket accept_connection(const Socket& listener, int& peer_port) {
  sockaddr_in peer{};
  int len = sizeof peer;
  const SOCKET s = ::accept(sock_of(listener), reinterpret_cast<sockaddr*>(&peer), &len);
  if (s == INVALID_SOCKET) return Socket();
  // An accepted socket inherits the listener's attributes, not-inheritable included.
  peer_port = port_of(peer);
  return Socket(static_cast<std::intptr_t>(s));
}

Socket connect_to(const std::string& host, int port, int& local_port) {
  Socket s = new_socket();
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<u_short>(port));
  if (::inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1)
    throw std::invalid_argument("bad host " + host);
  if (::connect(sock_of(s), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    throw_wsa("connect to " + host);
  int len = sizeof a;
  if (::getsockname(sock_of(s), reinterpret_cast<sockaddr*>(&a), &len) == 0)
    local_port = port_of(a);
  return s;
}

int local_port_of(const Socket& s) {
  sockaddr_in a{};
  int len = sizeof a;
  if (::getsockname(sock_of(s), reinterpret_cast<sockaddr*>(&a), &len) != 0) return -1;
  return port_of(a);
}

void send_all(const Socket& s, const std::string& text) {
  for (size_t off = 0; off < text.size();) {
    const size_t left = text.size() - off;
    const int chunk = left > (1u << 20) ? (1 << 20) : static_cast<int>(left);
    const int n = ::send(sock_of(s), text.data() + off, chunk, 0);
    if (n == SOCKET_ERROR) throw_wsa("send");
    off += static_cast<size_t>(n);
  }
}

long receive(const Socket& s, char* buf, std::size_t len) {
  const int chunk = len > (1u << 20) ? (1 << 20) : static_cast<int>(len);
  const int n = ::recv(sock_of(s), buf, chunk, 0);
  return n == SOCKET_ERROR ? -1 : n;
}

std::string last_error() {
  return launch::win32::error_text(static_cast<DWORD>(::WSAGetLastError()));
}

std::vector<bool> wait_readable(const std::vector<const Socket*>& sockets, int timeout_ms) {
  std::vector<WSAPOLLFD> fds;
  for (const Socket* s : sockets) fds.push_back({sock_of(*s), POLLRDNORM, 0});
  std::vector<bool> ready(sockets.size(), false);
  if (::WSAPoll(fds.data(), static_cast<ULONG>(fds.size()), timeout_ms) <= 0) return ready;
  for (size_t i = 0; i < fds.size(); ++i) ready[i] = fds[i].revents != 0;
  return ready;
}

}  // namespace fc::cases::loopback
