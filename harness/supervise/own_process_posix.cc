#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include "harness/supervise/child_start_posix.h"
#include "harness/supervise/own_process.h"
#include "launch/start_state_posix.h"

namespace fc::harness {
namespace {

bool g_recorded = false;
launch::detail::IgnoredSignals g_ignored;
rlimit g_nofile{};
bool g_have_nofile = false;

}  // namespace

void record_inherited_signals() {
  if (g_recorded) return;
  g_recorded = true;
  g_ignored = launch::detail::IgnoredSignals::of_this_process();
  g_have_nofile = ::getrlimit(RLIMIT_NOFILE, &g_nofile) == 0;
}

std::vector<int> inherited_ignored_signals() {
  record_inherited_signals();
  std::vector<int> out;
  for (int sig = 1; sig < launch::detail::IgnoredSignals::kCount; ++sig)
    if (g_ignored.ignored[sig]) out.push_back(sig);
  return out;
}

void ignore_sigpipe() {
  record_inherited_signals();
  ::signal(SIGPIPE, SIG_IGN);
}

void open_closed_stdio() {
  for (int fd = 0; fd < 3; ++fd) {
    if (::fcntl(fd, F_GETFD) >= 0) continue;
    const int null = ::open("/dev/null", O_RDWR);  // takes the lowest free number: this one
    if (null >= 0 && null != fd) {
      ::dup2(null, fd);
      ::close(null);
    }
  }
}

void raise_descriptor_limit() {
  record_inherited_signals();
  if (!g_have_nofile || g_nofile.rlim_cur >= g_nofile.rlim_max) return;
  rlimit raised = g_nofile;
  raised.rlim_cur = g_nofile.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &raised);
}

std::uint64_t inherited_descriptor_limit() {
  record_inherited_signals();
  rlimit now{};
  if (!g_have_nofile || ::getrlimit(RLIMIT_NOFILE, &now) != 0 || now.rlim_cur == g_nofile.rlim_cur)
    return 0;
  return static_cast<std::uint64_t>(g_nofile.rlim_cur);
}

launch::detail::ChildStart inherited_child_start() {
  launch::detail::ChildStart start;
  for (int sig : inherited_ignored_signals()) start.ignored.ignored[sig] = true;
  start.nofile = inherited_descriptor_limit();
  return start;
}

}  // namespace fc::harness
