// fdio's Linux primitives: every descriptor close-on-exec at birth, MSG_NOSIGNAL, pidfds.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "launch/fdio_posix.h"

namespace fc::launch::detail {

std::pair<Fd, Fd> make_pipe() {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) throw_errno("pipe2");
  return {Fd(p[0]), Fd(p[1])};
}

std::pair<Fd, Fd> make_socketpair(int type) {
  int s[2];
  if (::socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, s) != 0) throw_errno("socketpair");
  return {Fd(s[0]), Fd(s[1])};
}

int send_nosignal_flags() { return MSG_NOSIGNAL; }

int recvmsg_cloexec_flags() { return MSG_CMSG_CLOEXEC; }

Fd open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open  // the kernel headers of the build machine know it (Linux >= 5.3)
  const long fd = ::syscall(SYS_pidfd_open, pid, 0);
  if (fd >= 0) return Fd(static_cast<int>(fd));
#else
  (void)pid;
#endif
  return Fd();
}

}  // namespace fc::launch::detail
