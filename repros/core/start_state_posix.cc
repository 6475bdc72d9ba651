#include <fcntl.h>
#include <signal.h>

#include "core/start_state.h"

namespace fc {

nlohmann::json start_state() {
  nlohmann::json fds = nlohmann::json::array(), blocked = nlohmann::json::array(),
                 ignored = nlohmann::json::array();
  for (int fd = 0; fd < 1024; ++fd)
    if (::fcntl(fd, F_GETFD) >= 0) fds.push_back(fd);
  sigset_t mask;
  sigemptyset(&mask);
  ::sigprocmask(SIG_BLOCK, nullptr, &mask);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sigismember(&mask, sig) == 1) blocked.push_back(sig);
    struct sigaction sa {};
    if (::sigaction(sig, nullptr, &sa) == 0 && sa.sa_handler == SIG_IGN) ignored.push_back(sig);
  }
  return {{"fds", fds}, {"blocked", blocked}, {"ignored", ignored}};
}

}  // namespace fc
