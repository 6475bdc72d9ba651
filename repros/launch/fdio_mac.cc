// fdio's macOS primitives. macOS has no pipe2, no SOCK_CLOEXEC, no MSG_NOSIGNAL, no
// MSG_CMSG_CLOEXEC and no pidfd: close-on-exec is set right after creation, sockets get
// SO_NOSIGPIPE, and waiting for a process falls back to polling waitpid (worker_posix.cc).
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "launch/fdio_posix.h"

namespace fc::launch::detail {
namespace {

void no_sigpipe(int fd) {
  const int on = 1;
  if (::setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, sizeof on) != 0)
    throw_errno("setsockopt(SO_NOSIGPIPE)");
}

}  // namespace

std::pair<Fd, Fd> make_pipe() {
  int p[2];
  if (::pipe(p) != 0) throw_errno("pipe");
  std::pair<Fd, Fd> ends{Fd(p[0]), Fd(p[1])};  // owned before anything can throw
  set_cloexec(ends.first.get(), true);
  set_cloexec(ends.second.get(), true);
  return ends;
}

std::pair<Fd, Fd> make_socketpair(int type) {
  int s[2];
  if (::socketpair(AF_UNIX, type, 0, s) != 0) throw_errno("socketpair");
  std::pair<Fd, Fd> ends{Fd(s[0]), Fd(s[1])};
  for (const Fd* fd : {&ends.first, &ends.second}) {
    set_cloexec(fd->get(), true);
    no_sigpipe(fd->get());
  }
  return ends;
}

int send_nosignal_flags() { return 0; }

int recvmsg_cloexec_flags() { return 0; }

Fd open_pidfd(pid_t) { return Fd(); }

}  // namespace fc::launch::detail
