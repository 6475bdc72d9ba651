// os_handle.h on Linux and macOS: fstat says what a descriptor is; the sharer listens on a Unix
// socket in a private directory under /tmp and answers each ticket with the descriptor attached
// as SCM_RIGHTS (launch's fdio helpers, which the forkserver uses for the same purpose).
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "cases/support/os_handle.h"
#include "cases/support/scratch_dir.h"
#include "launch/fdio_posix.h"

namespace fc::cases::os_handle {
namespace {

using launch::detail::Fd;
using launch::detail::throw_errno;

const char* kind_of(mode_t mode) {
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISFIFO(mode)) return "pipe";
  if (S_ISREG(mode)) return "file";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISDIR(mode)) return "directory";
  return "handle";
}

// A Unix stream socket, close-on-exec (atomically where SOCK_CLOEXEC exists) and never raising
// SIGPIPE (macOS: SO_NOSIGPIPE; Linux: fdio sends with MSG_NOSIGNAL).
Fd unix_socket() {
#ifdef SOCK_CLOEXEC
  Fd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
#else
  Fd s(::socket(AF_UNIX, SOCK_STREAM, 0));
#endif
  if (!s) throw_errno("socket(AF_UNIX)");
  launch::detail::set_cloexec(s.get(), true);
#ifdef SO_NOSIGPIPE
  const int on = 1;
  ::setsockopt(s.get(), SOL_SOCKET, SO_NOSIGPIPE, &on, sizeof on);
#endif
  return s;
}

sockaddr_un address_of(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path)
    throw std::invalid_argument("socket path too long: " + path);
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  return a;
}

constexpr char kGranted = 'y';
constexpr char kUnknown = 'n';

}  // namespace

Info inspect(std::intptr_t handle) {
  struct stat st {};
  if (::fstat(static_cast<int>(handle), &st) != 0)
    throw_errno(("fstat(fd " + std::to_string(handle) + ")").c_str());
  Info info;
  info.kind = kind_of(st.st_mode);
  info.identity = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  info.text =
      "fd " + std::to_string(handle) + ", " + info.kind + " inode " + std::to_string(st.st_ino);
  return info;
}

void close_handle(std::intptr_t handle) { ::close(static_cast<int>(handle)); }

const char* sharing_unavailable_reason() { return nullptr; }

struct Sharer::Impl {
  // Short (sun_path holds about 100 bytes): under /tmp rather than a long $TMPDIR.
  ScratchDir dir{"sharer", "/tmp"};
  std::string path = dir.file("s");
  Fd listener;
  Fd stop_read, stop_write;
  std::mutex mutex;
  std::map<std::uint64_t, Fd> pending;  // key -> the duplicate it hands out
  std::mt19937_64 keys{std::random_device{}()};
  std::atomic<int> redeemed{0};
  std::thread thread;

  void serve() {
    for (;;) {
      pollfd p[2] = {{listener.get(), POLLIN, 0}, {stop_read.get(), POLLIN, 0}};
      if (::poll(p, 2, -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (p[1].revents != 0) return;
      if ((p[0].revents & POLLIN) != 0) answer_one();
    }
  }

  void answer_one() {
    Fd client(::accept(listener.get(), nullptr, nullptr));
    if (!client) return;
    launch::detail::set_cloexec(client.get(), true);
    // A client that connects and says nothing must not stall every other one for long.
    timeval tv{5, 0};
    ::setsockopt(client.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::uint64_t key = 0;
    if (launch::detail::read_exact(client.get(), &key, sizeof key) !=
        static_cast<ssize_t>(sizeof key))
      return;
    Fd handle;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = pending.find(key);
      if (it != pending.end()) {
        handle = std::move(it->second);
        pending.erase(it);
      }
    }
    if (!handle) {
      launch::detail::send_all(client.get(), &kUnknown, 1);
      return;
    }
    // Counted before the send: the worker holds the descriptor the moment the send is done, and
    // may ask how many were redeemed before this thread would have counted it.
    ++redeemed;
    if (!launch::detail::send_with_fds(client.get(), &kGranted, 1, {handle.get()})) --redeemed;
  }
};

Sharer::Sharer() : impl_(std::make_unique<Impl>()) {
  impl_->listener = unix_socket();
  const sockaddr_un a = address_of(impl_->path);
  if (::bind(impl_->listener.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 ||
      ::listen(impl_->listener.get(), 16) != 0) {
    const int err = errno;
    throw_errno(err, ("bind/listen " + impl_->path).c_str());
  }
  auto stop = launch::detail::make_pipe();
  impl_->stop_read = std::move(stop.first);
  impl_->stop_write = std::move(stop.second);
  impl_->thread = std::thread([impl = impl_.get()] { impl->serve(); });
}

Sharer::~Sharer() {
  const char bye = 0;
  launch::detail::write_all(impl_->stop_write.get(), &bye, 1);
  impl_->thread.join();
}

nlohmann::json Sharer::share(std::intptr_t handle) {
  Fd dup(::dup(static_cast<int>(handle)));
  if (!dup) throw_errno(("dup(fd " + std::to_string(handle) + ")").c_str());
  launch::detail::set_cloexec(dup.get(), true);
  std::lock_guard<std::mutex> lock(impl_->mutex);
  const std::uint64_t key = impl_->keys();
  impl_->pending.emplace(key, std::move(dup));
  return {{"address", impl_->path}, {"key", key}};
}

int Sharer::redeemed() const { return impl_->redeemed.load(); }

std::intptr_t redeem(const nlohmann::json& ticket) {
  const std::string path = ticket.at("address").get<std::string>();
  const std::uint64_t key = ticket.at("key").get<std::uint64_t>();
  Fd s = unix_socket();
  const sockaddr_un a = address_of(path);
  if (::connect(s.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0)
    throw_errno(("connect to the sharer at " + path).c_str());
  if (!launch::detail::send_all(s.get(), &key, sizeof key))
    throw_errno(("send the ticket to " + path).c_str());
  char answer = 0;
  std::vector<Fd> fds;
  const ssize_t n = launch::detail::recv_with_fds(s.get(), &answer, 1, fds);
  if (n < 0) throw_errno(("recvmsg from the sharer at " + path).c_str());
  if (n == 0) throw std::runtime_error("the sharer at " + path + " closed without answering");
  if (answer != kGranted)
    throw std::runtime_error("the sharer at " + path + " knows no ticket " + std::to_string(key) +
                             " (redeemed already, or never issued)");
  if (fds.size() != 1)
    throw std::runtime_error("the sharer's answer carried " + std::to_string(fds.size()) +
                             " descriptors, not 1");
  return fds[0].release();
}

}  // namespace fc::cases::os_handle
