#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <thread>

#include <nlohmann/json.hpp>

#include "harness/base/json_shape.h"
#include "harness/platform/process_handle.h"
#include "harness/platform/process_info.h"
#include "harness/supervise/child_start_posix.h"
#include "harness/supervise/guardian.h"
#include "harness/supervise/interrupt.h"
#include "harness/supervise/own_process.h"
#include "harness/supervise/reaper.h"
#include "harness/supervise/zygote.h"
#include "launch/boost_process_v1.h"
#include "launch/fdio_posix.h"
#include "launch/process_tree.h"
#include "launch/start_state_posix.h"

namespace fc::harness {
namespace {

using launch::detail::Fd;

// Reads exactly `n` bytes before `until`; false with `why` when the zygote closed the connection,
// went quiet mid-message, or forkcheck was interrupted (Ctrl-C stops the wait: a zygote slow to
// load libtorch on a busy machine must not hold up the partial report for up to a minute).
bool read_within(int sock, char* buf, std::size_t n, std::chrono::steady_clock::time_point until,
                 double timeout_s, std::string& why) {
  std::size_t got = 0;
  while (got < n) {
    if (interrupted()) {
      why = "forkcheck was interrupted while it waited";
      return false;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          until - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      char text[64];
      std::snprintf(text, sizeof text, "no answer within %g s", timeout_s);
      why = text;
      return false;
    }
    // In slices: a signal that came just before the poll began would not interrupt it.
    pollfd p{sock, POLLIN, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 100)));
    if (rc < 0 && errno != EINTR) {
      why = std::string("cannot wait for it: ") + std::strerror(errno);
      return false;
    }
    if (rc <= 0) continue;
    // Readable: the read returns what is there without waiting for the rest.
    const ssize_t k = ::read(sock, buf + got, n - got);
    if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (k <= 0) {
      why = "it closed the connection";
      return false;
    }
    got += static_cast<std::size_t>(k);
  }
  return true;
}

// Reads one length-prefixed JSON message within `timeout_ms`, the whole of it: discarded json on
// failure, with why.
nlohmann::json read_message(int sock, int timeout_ms, std::string& why) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  const double timeout_s = timeout_ms / 1000.0;
  auto discarded = nlohmann::json(nlohmann::json::value_t::discarded);
  std::uint32_t len = 0;
  if (!read_within(sock, reinterpret_cast<char*>(&len), sizeof len, until, timeout_s, why))
    return discarded;
  if (len > (1u << 20)) {
    why = "it sent a message of " + std::to_string(len) + " bytes, more than the protocol's 1 MiB";
    return discarded;
  }
  std::string text(len, '\0');
  if (!read_within(sock, text.data(), len, until, timeout_s, why)) return discarded;
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) why = "it sent something that is not JSON";
  return j;
}

// A message that is JSON but not one the protocol has (repros/core/zygote_server.h): why, or "".
std::string hello_problem(const nlohmann::json& hello) {
  if (!hello.is_object())
    return "its hello is not what forkcheck expects: it is " + json_kind(hello) + ", not an object";
  for (const auto& problem : {member_problem(hello, "ready", JsonKind::kBoolean),
                              member_problem(hello, "threads", JsonKind::kInteger, false)})
    if (!problem.empty()) return "its hello is not what forkcheck expects: " + problem;
  return "";
}

std::string reply_problem(const nlohmann::json& reply) {
  if (!reply.is_object())
    return "its answer is not what forkcheck expects: it is " + json_kind(reply) +
           ", not an object";
  if (!reply.contains("pid")) {
    const std::string problem = member_problem(reply, "error", JsonKind::kString, false);
    return problem.empty() ? "" : "its answer is not what forkcheck expects: " + problem;
  }
  if (std::string problem = member_problem(reply, "pid", JsonKind::kInteger); !problem.empty())
    return "its answer is not what forkcheck expects: " + problem;
  const auto pid = reply["pid"].get<long long>();
  if (pid <= 0 || pid > std::numeric_limits<ProcessId>::max())
    return "its answer is not what forkcheck expects: \"pid\" " + std::to_string(pid) +
           " is no process id";
  return "";
}

}  // namespace

Zygote::Zygote(const std::string& program, double timeout_s) {
  Reaper::instance();  // we must be a child subreaper before any command is re-parented to us
  auto [ours, theirs] = launch::detail::make_socketpair(SOCK_STREAM);
  const int child_fd = theirs.get();
  // A placeholder longer than any job's token, which each command overwrites in place.
  std::vector<std::string> env_strings;
  for (char** e = ::environ; e && *e; ++e) {
    const std::string entry = *e;
    const std::string key = entry.substr(0, entry.find('='));
    if (key != kRunTokenVar && key != "FORKCHECK_CHANNEL_FD" && key != "FORKCHECK_ZYGOTE_FD" &&
        key != "FORKCHECK_PTRACER")
      env_strings.push_back(entry);
  }
  env_strings.push_back(std::string(kRunTokenVar) + "=" + run_token() + "-zygote-" +
                        std::string(40, '0'));
  env_strings.push_back("FORKCHECK_ZYGOTE_FD=" + std::to_string(child_fd));
  env_strings.push_back("FORKCHECK_PTRACER=" +
                        std::to_string(::getpid()));  // see supervisor_posix.cc
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  char** const envp_data = envp.data();
  const launch::detail::ChildStart child_start = inherited_child_start();
  try {
    bp::child c(
        bp::exe = program, bp::args = std::vector<std::string>{"--zygote"},
        bp::std_in<bp::null, bp::std_out> bp::null, bp::std_err > bp::null,
        bp::extend::on_exec_setup = [=](auto& exec) {
          exec.env = envp_data;
          // What every child of ours starts with (supervisor.h); the zygote passes it on.
          child_start.apply(child_fd);
          ::fcntl(child_fd, F_SETFD, 0);
        });
    pid_ = c.id();
    c.detach();  // the Reaper reaps it
    note_helper_process(pid_);
    if (auto f = launch::process_facts(pid_)) start_time_ = f->start_time;
  } catch (const std::exception& e) {
    why_not_ = "cannot start " + program + " --zygote: " + e.what();
    return;
  }
  theirs.reset();
  std::string why;
  auto hello = read_message(ours.get(), static_cast<int>(timeout_s * 1000), why);
  if (!hello.is_discarded() && !(why = hello_problem(hello)).empty())
    hello = nlohmann::json(nlohmann::json::value_t::discarded);
  if (hello.is_discarded()) {
    why_not_ = program + " --zygote did not get ready: " + why;
  } else if (!hello["ready"].get<bool>()) {
    why_not_ = program + " --zygote has " + std::to_string(hello.value("threads", 0)) +
               " threads after loading: forking it would be the hazard itself";
  } else {
    sock_ = ours.release();
    return;
  }
  // Never ready: the destructor ends it (it reads EOF, or is killed).
}

Zygote::~Zygote() {
  if (sock_ >= 0) ::close(sock_);  // the zygote exits when it reads EOF
  // Waited for, so that it does not outlive forkcheck (a CI step that looks for leftovers right
  // after forkcheck returned would see it); killed, through a handle, if it does not end in time:
  // at once after Ctrl-C (one still loading, deaf to EOF, would hold up the exit 2 s).
  if (pid_ > 0) Reaper::instance().end_child(pid_, start_time_, interrupted() ? 0.2 : 2);
}

std::optional<ProcessId> Zygote::start(const std::vector<std::string>& args, int out, int err,
                                       int chan,
                                       const std::vector<std::pair<std::string, std::string>>& env,
                                       std::string& why) {
  if (sock_ < 0) {
    why = why_not_;
    return std::nullopt;
  }
  nlohmann::json request = {{"argv", args},
                            {"fds", {"out", "err"}},
                            {"env", nlohmann::json::object()},
                            {"ignored_signals", inherited_ignored_signals()}};
  std::vector<int> fds = {out, err};
  if (chan >= 0) {
    request["fds"].push_back("chan");
    fds.push_back(chan);
  }
  for (const auto& [k, v] : env) request["env"][k] = v;
  const std::string text = request.dump();
  std::string frame(sizeof(std::uint32_t), '\0');
  const auto len = static_cast<std::uint32_t>(text.size());
  std::memcpy(frame.data(), &len, sizeof len);
  frame += text;
  // A zygote that cannot be reached is given up: every later start is exec'd, with this reason.
  auto give_up = [&](const std::string& reason) {
    why = why_not_ = reason;
    ::close(sock_);
    sock_ = -1;
    return std::nullopt;
  };
  if (!launch::detail::send_with_fds(sock_, frame.data(), frame.size(), fds))
    return give_up(std::string("the zygote is gone: ") + std::strerror(errno));
  auto reply = read_message(sock_, 10000, why);
  // An answer that is JSON but not the protocol's is no answer: it may have forked all the same.
  if (!reply.is_discarded() && !(why = reply_problem(reply)).empty())
    reply = nlohmann::json(nlohmann::json::value_t::discarded);
  if (reply.is_discarded()) {
    // It may have forked the command all the same: that copy would run beside the exec'd one,
    // with its pipes and token. Whatever of ours carries the token is ended first.
    for (const auto& [k, v] : env)
      if (k == kRunTokenVar)
        for (ProcessId p : descendants_with_env(::getpid(), kRunTokenVar, v))
          if (auto f = launch::process_facts(p))
            if (auto h = ProcessHandle::open(p, f->start_time)) h->signal(SIGKILL);
    return give_up("the zygote did not answer: " + why);
  }
  if (!reply.contains("pid")) {
    why = "the zygote refused: " + reply.value("error", std::string("no reason given"));
    return std::nullopt;
  }
  return static_cast<ProcessId>(reply["pid"].get<long long>());
}

Zygotes::Zygotes(bool enabled) : enabled_(enabled) {
  const char* env = std::getenv("FORKCHECK_ZYGOTE");
  if (env && std::string(env) == "0") enabled_ = false;
}

Zygote* Zygotes::for_program(const std::string& program) {
  if (!enabled_) return nullptr;
  auto& z = by_program_[program];
  if (!z) z = std::make_unique<Zygote>(program);
  return z.get();
}

std::string Zygotes::why_off() const {
  if (!enabled_)
    return "zygotes are off (--no-zygote or FORKCHECK_ZYGOTE=0): every variant was exec'd";
  std::string why;
  for (const auto& [program, z] : by_program_)
    if (!z->ready()) why += (why.empty() ? "" : "; ") + z->why_not();
  return why;
}

}  // namespace fc::harness
