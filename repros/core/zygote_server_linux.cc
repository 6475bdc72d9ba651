#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/end_process.h"
#include "core/zygote_server.h"
#include "launch/fdio_posix.h"
#include "launch/ptracer.h"
#include "launch/start_state_posix.h"

namespace fc {
namespace {

using launch::detail::Fd;

int thread_count() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
  }
  return n;
}

bool send_message(int sock, const nlohmann::json& j) {
  const std::string text = j.dump();
  const auto len = static_cast<std::uint32_t>(text.size());
  return launch::detail::send_all(sock, &len, sizeof len) &&
         launch::detail::send_all(sock, text.data(), text.size());
}

// One request; false at EOF (the harness is done) or on a broken stream.
bool receive_request(int sock, nlohmann::json& request, std::vector<Fd>& fds) {
  std::uint32_t len = 0;
  if (launch::detail::recv_with_fds(sock, &len, sizeof len, fds) != sizeof len) return false;
  if (len > (16u << 20)) return false;
  std::string text(len, '\0');
  if (launch::detail::read_exact(sock, text.data(), len) != static_cast<ssize_t>(len)) return false;
  request = nlohmann::json::parse(text, nullptr, false);
  return !request.is_discarded();
}

// FORKCHECK_RUN is rewritten where exec put it, not with setenv: the harness finds a job's
// processes by reading /proc/PID/environ, which shows the block exec set up, not setenv's copies.
// The zygote was started with a placeholder at least as long as any job's token.
bool put_run_token(const std::string& token) {
  char* value = std::getenv("FORKCHECK_RUN");
  if (!value || std::strlen(value) < token.size()) return false;
  const size_t room = std::strlen(value);
  // Ended by the memset below, or where room == size by the block's own NUL at value[room].
  std::memcpy(value, token.data(), token.size());  // NOLINT(bugprone-not-null-terminated-result)
  std::memset(value + token.size(), '\0', room - token.size());
  return true;
}

// The descriptors this program opened before it began to serve (as its libraries loaded): an
// exec'd copy would have them too, so the forked commands keep them.
std::vector<int> g_own_fds;

std::vector<int> open_fds_from_3() {
  std::vector<int> fds;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    const int dir_fd = ::dirfd(d);
    while (dirent* e = ::readdir(d)) {
      const int fd = std::atoi(e->d_name);
      if (fd >= 3 && fd != dir_fd) fds.push_back(fd);
    }
    ::closedir(d);
  }
  return fds;
}

// In the command's process: become what a fresh exec by the harness would have made, then run:
// its own process group, stdio and channel from the harness and no other descriptor of the
// zygote's, an empty signal mask and the dispositions the harness inherited.
[[noreturn]] void become_and_run(const nlohmann::json& request, std::vector<Fd>& fds,
                                 const std::function<int(const std::vector<std::string>&)>& run) {
  ::setpgid(0, 0);
  launch::detail::IgnoredSignals ignored;
  for (const auto& sig : request.value("ignored_signals", nlohmann::json::array()))
    if (sig.is_number_integer() && sig.get<int>() > 0 &&
        sig.get<int>() < launch::detail::IgnoredSignals::kCount)
      ignored.ignored[sig.get<int>()] = true;
  launch::detail::reset_signals(ignored);
  launch::allow_supervisor_ptrace();  // a new task: the harness's debugger may attach to it
  const auto& names = request.at("fds");
  int chan = -1;
  for (size_t i = 0; i < names.size() && i < fds.size(); ++i) {
    const std::string n = names[i].get<std::string>();
    if (n == "out")
      ::dup2(fds[i].get(), STDOUT_FILENO);
    else if (n == "err")
      ::dup2(fds[i].get(), STDERR_FILENO);
    else if (n == "chan")
      chan = fds[i].release();
  }
  fds.clear();
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null >= 0) ::dup2(null, STDIN_FILENO);
  if (null > STDIN_FILENO) ::close(null);
  std::vector<int> keep = g_own_fds;
  if (chan >= 0) keep.push_back(chan);
  launch::detail::close_from_3(keep.data(), keep.size());
  ::unsetenv("FORKCHECK_CHANNEL_FD");
  if (chan >= 0) {
    launch::detail::set_cloexec(chan, false);  // inherited by workers, as under exec
    ::setenv("FORKCHECK_CHANNEL_FD", std::to_string(chan).c_str(), 1);
  }
  const nlohmann::json env = request.value("env", nlohmann::json::object());
  for (const auto& [k, v] : env.items()) {
    if (k == "FORKCHECK_RUN") {
      if (!put_run_token(v.get<std::string>())) {
        std::fprintf(stderr, "forkcheck zygote: no room for the run token\n");
        std::_Exit(127);
      }
    } else {
      ::setenv(k.c_str(), v.get<std::string>().c_str(), 1);
    }
  }
  std::vector<std::string> args = request.at("argv").get<std::vector<std::string>>();
  end_process(run(args));  // as the exec'd program ends (core/end_process.h)
}

}  // namespace

int serve_zygote(const char* argv0,
                 const std::function<int(const std::vector<std::string>&)>& run) {
  const char* fd_text = std::getenv("FORKCHECK_ZYGOTE_FD");
  if (!fd_text) {
    std::fprintf(stderr, "%s: --zygote needs FORKCHECK_ZYGOTE_FD\n", argv0);
    return 2;
  }
  Fd sock(std::atoi(fd_text));
  launch::detail::set_cloexec(sock.get(), true);
  g_own_fds = open_fds_from_3();
  g_own_fds.erase(std::remove(g_own_fds.begin(), g_own_fds.end(), sock.get()), g_own_fds.end());
  ::unsetenv("FORKCHECK_ZYGOTE_FD");
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the harness
  if (::getppid() == 1) return 1;      // it died before we asked

  // Whatever happened at load time, the zygote must still have one thread: forking a
  // multi-threaded process is the very hazard forkcheck reports.
  const int threads = thread_count();
  if (!send_message(sock.get(),
                    {{"ready", threads == 1}, {"threads", threads}, {"pid", ::getpid()}}))
    return 1;
  for (;;) {
    nlohmann::json request;
    std::vector<Fd> fds;
    if (!receive_request(sock.get(), request, fds)) return 0;
    if (thread_count() != 1 || !request.contains("argv") || !request.contains("fds")) {
      send_message(sock.get(),
                   {{"error", thread_count() != 1
                                  ? "the zygote has " + std::to_string(thread_count()) + " threads"
                                  : "malformed request"}});
      continue;
    }
    const pid_t middle = ::fork();
    if (middle < 0) {
      send_message(sock.get(), {{"error", std::string("fork: ") + std::strerror(errno)}});
      continue;
    }
    if (middle == 0) {
      // The middle process forks the command and leaves at once, so the command is re-parented
      // to the harness, which reaps it with its true wait status.
      const pid_t cmd = ::fork();
      if (cmd == 0) {
        sock.reset();
        become_and_run(request, fds, run);
      }
      if (cmd > 0) ::setpgid(cmd, cmd);  // the group exists before the harness can signal it
      send_message(sock.get(),
                   cmd > 0
                       ? nlohmann::json{{"pid", cmd}}
                       : nlohmann::json{{"error", std::string("fork: ") + std::strerror(errno)}});
      std::_Exit(0);
    }
    fds.clear();
    while (::waitpid(middle, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

}  // namespace fc
