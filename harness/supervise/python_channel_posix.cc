#include "harness/supervise/python_channel.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <utility>
#include <vector>

#include "harness/stacks/stacks.h"
#include "harness/supervise/exit_status.h"
#include "reports/model/report_model_json.h"
#include "reports/python_view.h"
#include "reports/text.h"

namespace fc::harness {
namespace {

using json = nlohmann::json;

constexpr std::size_t kMaxLine = 1u << 20;       // an event larger than this is not one
constexpr std::size_t kMaxDumpBytes = 4u << 20;  // what one process's dumps keep
// Bounds on what is kept of each process (the report says what went past them): forks made
// beside other threads are kept to a higher bound than others, as they are the hazards.
constexpr std::size_t kMaxProcesses = 2000, kMaxThreads = 256, kMaxForks = 200,
                      kMaxThreadedForks = 2000, kMaxExceptions = 50, kMaxChildExits = 2000,
                      kMaxFrames = 128;
constexpr std::size_t kMaxText = 4096;  // a message, a name, a path

std::string text_of(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return "";
  return reports::cap_text(reports::valid_utf8(it->get<std::string>()), kMaxText);
}

json int_of(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return nullptr;
  return it->get<std::int64_t>();
}

// {"file","line","function","code"}, each checked; null when it is not a frame.
json frame_of(const json& f) {
  if (!f.is_object()) return nullptr;
  json out = {{"file", text_of(f, "file")}, {"function", text_of(f, "function")}};
  const json line = int_of(f, "line");
  out["line"] = line.is_null() ? json(0) : line;
  if (const std::string code = text_of(f, "code"); !code.empty()) out["code"] = code;
  return out;
}

// An event's "where": the frame it names, or null.
json where_of(const json& j) { return j.contains("where") ? frame_of(j["where"]) : json(nullptr); }

json frames_of(const json& j, const char* key) {
  json out = json::array();
  const auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const auto& f : *it) {
    if (out.size() >= kMaxFrames) break;
    json frame = frame_of(f);
    if (!frame.is_null()) out.push_back(std::move(frame));
  }
  return out;
}

json thread_of(const json& t) {
  json out = {
      {"ident",
       t.contains("ident") && t["ident"].is_number_unsigned() ? t["ident"] : int_of(t, "ident")},
      {"native_id", int_of(t, "native_id")},
      {"name", text_of(t, "name")},
      {"target", text_of(t, "target")}};
  if (t.contains("daemon") && t["daemon"].is_boolean()) out["daemon"] = t["daemon"];
  if (t.contains("started_at")) out["started_at"] = frame_of(t["started_at"]);
  return out;
}

// A JSON value from the program, kept only as plain data of bounded size.
json bounded(const json& j, std::size_t max = kMaxText) {
  const std::string dumped = j.dump();
  return dumped.size() <= max ? j : json(nullptr);
}

// A fork event as kept, but for when it came (at_s).
json fork_entry(const json& j) {
  json threads = json::array();
  if (j.contains("threads") && j["threads"].is_array())
    for (const auto& t : j["threads"])
      if (threads.size() < kMaxThreads) threads.push_back(thread_of(t));
  return {{"seq", int_of(j, "seq")},
          {"stack", frames_of(j, "stack")},
          {"threads", std::move(threads)},
          {"native_threads", int_of(j, "native_threads")},
          {"torch", j.contains("torch") ? bounded(j["torch"]) : json(nullptr)},
          {"start_method", text_of(j, "start_method")}};
}

bool set_cloexec_nonblock(int fd) {
  return ::fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 &&
         ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) == 0;
}

}  // namespace

struct PythonChannel::Process {
  int pid = 0;
  double first_seen_s = 0;
  json hello = nullptr;
  std::map<std::uint64_t, json> threads;
  json forks = json::array(), exceptions = json::array(), child_exits = json::array(),
       start_methods = json::array(), ends_asked = json::array(), signal_handlers = json::array(),
       signals_sent = json::array(), ends_looked = json::array(), pools_broken = json::array();
  json torch = nullptr, exit = nullptr;
  // The test each test runner says is running in it now ({"pytest": {name, since_s}, ...}).
  json tests = json::object();
  std::string crash_dumps_rearmed_over;  // whose fatal-signal handlers faulthandler was put over
  std::optional<Clock::time_point> alarm_at;  // its pending alarm, when not ignored
  Clock::time_point alarm_set;
  json alarm_where = nullptr;
  bool events_open = false, dumps_open = false;
  bool adopted = false;  // forkcheck attach found its attachable bootstrap: it tells nothing
  int dump_file = -1;    // the file its faulthandler writes into, when it passed one
  off_t dump_file_read = 0;
  std::string dumps;
  std::size_t dumps_base = 0;  // where `dumps` begins in the stream (its oldest part let go)
  Clock::time_point dump_last;
  std::size_t stacks_answers = 0;
  json last_stacks = nullptr;
  double gone_s = -1;  // when its events connection closed, from the channel's opening

  // A test runner's word on the test running now: {"name": ..., "by": "pytest"|"unittest"};
  // a null name ends it.
  void set_test(const json& said, double at_s) {
    const std::string by = text_of(said, "by");
    if (by != "pytest" && by != "unittest") return;
    const std::string name = text_of(said, "name");
    if (!name.empty())
      tests[by] = {{"name", name}, {"by", by}, {"since_s", at_s}};
    else
      tests.erase(by);
  }
  // A fork like the one kept last (the same stack, threads, torch and start method), the next of
  // this process's forks, is folded into it: its `last_seq`, `last_at_s` and `folded` (how many
  // forks the entry stands for) move on. Whatever differs starts an entry of its own.
  bool fold_fork(const json& event, double at_s) {
    if (forks.empty()) return false;
    json& last = forks.back();
    const json seq = int_of(event, "seq");
    const json& last_seq = last.contains("last_seq") ? last["last_seq"] : last["seq"];
    if (!seq.is_number_integer() || !last_seq.is_number_integer() ||
        seq.get<long long>() != last_seq.get<long long>() + 1)
      return false;
    json entry = fork_entry(event);
    for (const char* key : {"stack", "threads", "native_threads", "torch", "start_method"})
      if (entry[key] != last[key]) return false;
    last["last_seq"] = seq;
    last["last_at_s"] = at_s;
    last["folded"] = last.value("folded", 1) + 1;
    return true;
  }
  // pytest's, else unittest's (pytest runs unittest's TestCases too, and names them better).
  json current_test() const {
    for (const char* by : {"pytest", "unittest"})
      if (tests.contains(by)) return tests[by];
    return nullptr;
  }
};

int PythonChannel::dump_signal() {
#ifdef SIGRTMIN
  return SIGRTMIN + 7;  // a real-time signal few programs use; the bootstrap chains to theirs
#else
  return SIGUSR2;
#endif
}

int PythonChannel::stacks_signal() {
#ifdef SIGRTMIN
  return SIGRTMIN + 8;
#else
  return SIGUSR1;
#endif
}

std::unique_ptr<PythonChannel> PythonChannel::open(const std::string& token, std::string& why) {
  std::unique_ptr<PythonChannel> c(new PythonChannel());
  c->opened_ = Clock::now();
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) {
    why = std::string("socket: ") + std::strerror(errno);
    return nullptr;
  }
  c->listen_fd_ = fd;
  set_cloexec_nonblock(fd);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string name = "forkcheck-py-" + token;
  socklen_t len = 0;
#ifdef __linux__
  // Abstract: nothing on disk to leave behind, and no folder that must be writable.
  addr.sun_path[0] = '\0';
  name = name.substr(0, sizeof(addr.sun_path) - 2);
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  c->address_ = "@" + name;
#else
  const std::string path = (std::filesystem::temp_directory_path() / (name + ".sock")).string();
  if (path.size() >= sizeof(addr.sun_path)) {
    why = "the temporary folder's path is too long for a socket: " + path;
    return nullptr;
  }
  ::unlink(path.c_str());
  std::memcpy(addr.sun_path, path.data(), path.size());
  len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + 1);
  c->address_ = path;
  c->socket_file_ = path;
#endif
  // A burst of workers starting at once each connects twice: as many waiting as the OS allows.
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd, SOMAXCONN) != 0) {
    why = std::string("bind/listen: ") + std::strerror(errno);
    return nullptr;
  }
  return c;
}

std::unique_ptr<PythonChannel> PythonChannel::for_attach() {
  std::unique_ptr<PythonChannel> c(new PythonChannel());
  c->opened_ = Clock::now();
  return c;
}

void PythonChannel::forget_adopted() {
  for (auto it = processes_.begin(); it != processes_.end();) {
    if (!it->second->adopted) {
      ++it;
      continue;
    }
    if (it->second->dump_file >= 0) ::close(it->second->dump_file);
    it = processes_.erase(it);
  }
}

void PythonChannel::adopt(int pid, int dump_file,
                          const std::vector<std::pair<int, std::string>>& threads,
                          Clock::time_point now) {
  Process& p = process(pid, now);
  p.adopted = true;
  if (p.dump_file >= 0) ::close(p.dump_file);
  p.dump_file = dump_file;
  // Only what is written from now on: what an earlier look asked for is not this one's.
  p.dump_file_read = ::lseek(dump_file, 0, SEEK_END);
  if (p.dump_file_read < 0) p.dump_file_read = 0;
  p.events_open = p.dumps_open = true;
  p.hello = {{"pid", pid},
             {"dump_signal", dump_signal()},
             {"main_thread", {{"native_id", pid}, {"name", "MainThread"}}}};
  // The main thread is not listed (a forked child's is: the thread that forked, by its name).
  p.threads.clear();
  p.threads[static_cast<std::uint64_t>(pid)] = {{"native_id", pid}, {"name", "MainThread"}};
  for (const auto& [tid, name] : threads)
    p.threads[static_cast<std::uint64_t>(tid)] = {{"native_id", tid}, {"name", name}};
}

PythonChannel::~PythonChannel() {
  for (auto& [fd, c] : connections_) {
    ::close(fd);
    if (c.passed_fd >= 0) ::close(c.passed_fd);
  }
  for (auto& [pid, p] : processes_)
    if (p->dump_file >= 0) ::close(p->dump_file);
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (!socket_file_.empty()) ::unlink(socket_file_.c_str());
}

std::vector<int> PythonChannel::connection_fds() const {
  std::vector<int> fds;
  for (const auto& [fd, c] : connections_) fds.push_back(fd);
  return fds;
}

void PythonChannel::accept_ready(Clock::time_point now) {
  for (;;) {
    const int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) return;
    if (connections_.size() >= 2 * kMaxProcesses) {  // a tree of thousands: the rest unheard
      ::close(fd);
      drop("connection");
      continue;
    }
    set_cloexec_nonblock(fd);
    Connection c;
    c.fd = fd;
    c.last_data = now;
#ifdef SO_PEERCRED
    ucred cred{};
    socklen_t n = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &n) == 0) c.peer_pid = cred.pid;
#endif
    connections_.emplace(fd, std::move(c));
  }
}

void PythonChannel::close_connection(Connection& c) {
  if (c.pid) {
    auto it = processes_.find(c.pid);
    if (it != processes_.end()) {
      if (c.role == Connection::Role::kEvents) {
        it->second->events_open = false;
        // When it was last heard of: its end, for a death weighed against forkcheck's looks.
        it->second->gone_s = std::chrono::duration<double>(Clock::now() - opened_).count();
      }
      if (c.role == Connection::Role::kDumps) it->second->dumps_open = false;
    }
  }
  ::close(c.fd);
  if (c.passed_fd >= 0) ::close(c.passed_fd);
  c.passed_fd = -1;
}

// Reads into buf; a descriptor passed with the bytes (SCM_RIGHTS) is kept in `passed` when that
// is -1 (the first, before the hello is read), and closed otherwise.
static ssize_t receive(int fd, char* buf, std::size_t size, int& passed) {
  iovec io{buf, size};
  alignas(cmsghdr) char control[CMSG_SPACE(4 * sizeof(int))];
  msghdr m{};
  m.msg_iov = &io;
  m.msg_iovlen = 1;
  m.msg_control = control;
  m.msg_controllen = sizeof control;
#ifdef MSG_CMSG_CLOEXEC
  const ssize_t n = ::recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
#else
  const ssize_t n = ::recvmsg(fd, &m, 0);
#endif
  if (n < 0) return n;
  for (cmsghdr* h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h)) {
    if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int got = -1;
      std::memcpy(&got, CMSG_DATA(h) + i * sizeof(int), sizeof got);
      if (passed < 0) {
        passed = got;
#ifndef MSG_CMSG_CLOEXEC
        ::fcntl(got, F_SETFD, FD_CLOEXEC);
#endif
      } else {
        ::close(got);
      }
    }
  }
  return n;
}

void PythonChannel::read_ready(int fd, Clock::time_point now) {
  auto it = connections_.find(fd);
  if (it == connections_.end()) return;
  Connection& c = it->second;
  char buf[65536];
  for (;;) {
    int ignored = 0;  // a descriptor passed after the hello is not taken
    const ssize_t n =
        receive(fd, buf, sizeof buf, c.role == Connection::Role::kUnknown ? c.passed_fd : ignored);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {
      close_connection(c);
      connections_.erase(it);
      return;
    }
    c.last_data = now;
    const char* data = buf;
    auto left = static_cast<std::size_t>(n);
    while (left > 0) {
      if (c.role == Connection::Role::kDumps) {
        dump_bytes(process(c.pid, now), data, left, now);
        break;
      }
      const char* nl = static_cast<const char*>(std::memchr(data, '\n', left));
      const std::size_t take = nl ? static_cast<std::size_t>(nl - data) : left;
      if (c.partial.size() + take <= kMaxLine) c.partial.append(data, take);
      if (!nl) break;
      std::string text = std::move(c.partial);
      c.partial.clear();
      data = nl + 1;
      left -= take + 1;
      try {
        line(c, text, now);
      } catch (const json::exception&) {
        drop("malformed");  // a field of the wrong type: that line is dropped, never the run
      }
    }
  }
}

std::size_t PythonChannel::processes_that_raised(const std::string& piece) const {
  std::size_t n = 0;
  for (const auto& [pid, p] : processes_)
    for (const auto& x : p->exceptions)
      if (x.value("message", "").find(piece) != std::string::npos) {
        ++n;
        break;
      }
  return n;
}

PythonChannel::Process& PythonChannel::process(int pid, Clock::time_point now) {
  auto& p = processes_[pid];
  if (!p) {
    p = std::make_unique<Process>();
    p->pid = pid;
    p->first_seen_s = std::chrono::duration<double>(now - opened_).count();
  }
  return *p;
}

bool PythonChannel::quiet(const Process& p) const {
  if (p.gone_s < 0 || p.events_open || p.dumps_open || !p.dumps.empty() || p.alarm_at) return false;
  for (const json* events : {&p.forks, &p.exceptions, &p.child_exits, &p.ends_asked,
                             &p.signals_sent, &p.ends_looked, &p.pools_broken, &p.signal_handlers})
    if (!events->empty()) return false;
  if (p.exit.is_object() && p.exit["code"] != json(0) && !p.exit["code"].is_null()) return false;
  const json& hello = p.hello;
  if (!hello.is_object()) return false;
  const json& ppid = hello.value("ppid", json());
  if (!ppid.is_number_integer()) return false;
  const auto parent = processes_.find(ppid.get<int>());
  if (parent == processes_.end()) return false;  // the program's own process, or one of its roots
  // Born of a fork beside other threads: the hazard watch and the findings name it by.
  if (hello.value("born", "") == "fork")
    for (const auto& f : parent->second->forks)
      if (reports::fork_entry_covers(reports::read_as<reports::PythonFork>(f),
                                     hello.value("fork_seq", json()).is_number_integer()
                                         ? std::optional<long long>(hello["fork_seq"])
                                         : std::nullopt) &&
          (!f.value("threads", json::array()).empty() || f.value("native_threads", 1) > 1))
        return false;
  return true;
}

bool PythonChannel::fold_a_quiet_process() {
  for (int attempt = 0; attempt < 2; ++attempt) {
    while (!quiet_candidates_.empty()) {
      const int pid = quiet_candidates_.back();
      quiet_candidates_.pop_back();
      const auto it = processes_.find(pid);
      // Named as nobody's parent at the scan; ended since, with no child told, it can be none.
      if (it == processes_.end() || !quiet(*it->second)) continue;
      if (it->second->dump_file >= 0) ::close(it->second->dump_file);
      processes_.erase(it);
      ++quiet_folded_;
      return true;
    }
    if (attempt > 0) break;
    if (last_scan_empty_ && ++refused_since_empty_scan_ < 64) return false;
    refused_since_empty_scan_ = 0;
    // A fresh scan: up to a quarter of the bound at a time, so that a long run of short-lived
    // processes costs a scan per that many, not one each.
    std::vector<std::pair<double, int>> found;
    std::set<int> parents;
    for (const auto& [pid, p] : processes_)
      if (p->hello.is_object() && p->hello.value("ppid", json()).is_number_integer())
        parents.insert(p->hello["ppid"].get<int>());
    for (const auto& [pid, p] : processes_) {
      if (parents.count(pid)) continue;
      // What its faulthandler wrote so far (a crash's dump) is read before it is judged quiet.
      if (p->gone_s >= 0 && p->dump_file >= 0) read_dump_file(*p, Clock::now());
      if (quiet(*p)) found.emplace_back(p->gone_s, pid);
    }
    std::sort(found.begin(), found.end());
    if (found.size() > kMaxProcesses / 4) found.resize(kMaxProcesses / 4);
    quiet_candidates_.clear();
    for (auto it = found.rbegin(); it != found.rend(); ++it)
      quiet_candidates_.push_back(it->second);
    last_scan_empty_ = found.empty();
  }
  return false;
}

void PythonChannel::line(Connection& c, const std::string& text, Clock::time_point now) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("ev") || !j["ev"].is_string()) {
    drop("malformed");
    return;
  }
  const std::string ev = j["ev"].get<std::string>();
  if (c.refused) return;  // its process was counted once, when refused
  if (c.role == Connection::Role::kUnknown) {
    const json pid = int_of(j, "pid");
    const std::string role = text_of(j, "role");
    // The hello names the process; the kernel's word for who connected wins where it has one.
    if (ev != "hello" || pid.is_null() || (role != "events" && role != "dumps") ||
        (c.peer_pid && c.peer_pid != pid.get<int>())) {
      drop("malformed");
      return;
    }
    if (processes_.size() >= kMaxProcesses && !processes_.count(pid.get<int>()) &&
        !fold_a_quiet_process()) {
      c.refused = true;
      if (role == "events") drop("process");  // a process once, by its events connection
      return;
    }
    c.pid = pid.get<int>();
    Process& p = process(c.pid, now);
    if (role == "dumps") {
      c.role = Connection::Role::kDumps;
      p.dumps_open = true;
      // Its faulthandler's file: a regular file (memfd, O_TMPFILE), read as it grows. The file
      // of an earlier program under the same pid (one that exec'd) is read to its end first.
      struct stat st {};
      if (j.value("file", false) == true && c.passed_fd >= 0 && ::fstat(c.passed_fd, &st) == 0 &&
          S_ISREG(st.st_mode)) {
        if (p.dump_file >= 0) {
          read_dump_file(p, now);
          ::close(p.dump_file);
        }
        p.dump_file = std::exchange(c.passed_fd, -1);
        p.dump_file_read = 0;
      }
      return;
    }
    c.role = Connection::Role::kEvents;
    p.events_open = true;
    // A new image under the same pid (it exec'd Python again): its state is its own.
    p.gone_s = -1;
    p.alarm_at.reset();
    p.alarm_where = nullptr;
    p.crash_dumps_rearmed_over.clear();
    json hello = {{"pid", c.pid},
                  {"ppid", int_of(j, "ppid")},
                  {"born", text_of(j, "born")},
                  {"fork_seq", int_of(j, "fork_seq")},
                  {"dump_signal", int_of(j, "dump_signal")},
                  {"stacks_signal", int_of(j, "stacks_signal")},
                  {"start_method", text_of(j, "start_method")}};
    for (const char* key : {"python", "main_thread", "cwd", "crash_dumps"})
      if (j.contains(key)) hello[key] = bounded(j[key]);
    // A long command line, or many site-packages folders, are still facts worth keeping.
    for (const char* key : {"argv", "paths"})
      if (j.contains(key)) hello[key] = bounded(j[key], 16 * kMaxText);
    p.hello = std::move(hello);
    p.tests = json::object();
    if (j.contains("test") && j["test"].is_object())
      p.set_test(j["test"], std::chrono::duration<double>(now - opened_).count());
    if (j.contains("main_thread") && j["main_thread"].is_object()) {
      json t = thread_of(j["main_thread"]);
      if (t["ident"].is_number()) p.threads[t["ident"].get<std::uint64_t>()] = t;
    }
    return;
  }
  if (c.role != Connection::Role::kEvents) return;
  Process& p = process(c.pid, now);
  const double at_s = std::chrono::duration<double>(now - opened_).count();
  if (ev == "thread") {
    json t = thread_of(j);
    if (t["ident"].is_number() && p.threads.size() < kMaxThreads) {
      t["at_s"] = at_s;
      // Key first: json's operator= takes its argument by value, and C++17 evaluates the right
      // side of an assignment first, so a moved-from t would give a null key.
      const auto ident = t["ident"].get<std::uint64_t>();
      p.threads[ident] = std::move(t);
    }
  } else if (ev == "fork" && p.fold_fork(j, at_s)) {
    // The same fork as the one before it, folded into it: a loop that forks a worker at a time
    // costs one entry however long it runs.
  } else if (ev == "fork" && p.forks.size() < (j.contains("threads") && j["threads"].is_array() &&
                                                       !j["threads"].empty()
                                                   ? kMaxThreadedForks
                                                   : kMaxForks)) {
    json entry = fork_entry(j);
    entry["at_s"] = at_s;
    p.forks.push_back(std::move(entry));
  } else if (ev == "test") {
    p.set_test(j, at_s);
  } else if (ev == "exception" && p.exceptions.size() < kMaxExceptions) {
    p.exceptions.push_back({{"where", text_of(j, "where")},
                            {"type", text_of(j, "type")},
                            {"message", text_of(j, "message")},
                            {"frames", frames_of(j, "frames")},
                            {"thread_name", text_of(j, "thread_name")},
                            {"process_name", text_of(j, "process_name")},
                            {"test", p.current_test()},
                            {"at_s", at_s}});
  } else if (ev == "child_exit" && p.child_exits.size() < kMaxChildExits) {
    json e = {{"pid", int_of(j, "pid")},    {"returncode", int_of(j, "returncode")},
              {"via", text_of(j, "via")},   {"asked", text_of(j, "asked")},
              {"name", text_of(j, "name")}, {"target", text_of(j, "target")},
              {"test", p.current_test()},   {"at_s", at_s}};
    // A negative return code is the signal that killed it (Python's convention), named here
    // where the number means what this OS means by it.
    if (e["returncode"].is_number_integer() && e["returncode"].get<int>() < 0)
      e["signal"] = signal_name(-e["returncode"].get<int>());
    p.child_exits.push_back(std::move(e));
  } else if (ev == "torch") {
    json t = bounded(j);
    if (t.is_object()) t.erase("ev");
    p.torch = std::move(t);
  } else if (ev == "start_method" && p.start_methods.size() < kMaxForks) {
    json said = {{"method", text_of(j, "method")},
                 {"where", where_of(j)},
                 {"overridden_by", text_of(j, "overridden_by")}};
    // The same choice at the same line (a test suite's get_context in a loop): counted once.
    bool again = false;
    for (auto& s : p.start_methods)
      if (s["method"] == said["method"] && s["where"] == said["where"] &&
          s["overridden_by"] == said["overridden_by"]) {
        s["count"] = s.value("count", 1) + 1;
        again = true;
        break;
      }
    if (!again) p.start_methods.push_back(std::move(said));
  } else if (ev == "end_asked" && p.ends_asked.size() < kMaxChildExits) {
    p.ends_asked.push_back({{"child", int_of(j, "child")},
                            {"how", text_of(j, "how")},
                            {"by", text_of(j, "by")},
                            {"where", where_of(j)},
                            {"at_s", at_s}});
  } else if (ev == "signal_sent" && p.signals_sent.size() < kMaxChildExits) {
    p.signals_sent.push_back({{"to", int_of(j, "to")},
                              {"group", j.contains("group") && j["group"] == true},
                              {"signal", int_of(j, "signal")},
                              {"where", where_of(j)},
                              {"at_s", at_s}});
  } else if (ev == "end_looked" && p.ends_looked.size() < kMaxChildExits) {
    p.ends_looked.push_back({{"child", int_of(j, "child")},
                             {"code", int_of(j, "code")},
                             {"via", text_of(j, "via")},
                             {"where", where_of(j)},
                             {"at_s", at_s}});
  } else if (ev == "pool_broken" && p.pools_broken.size() < kMaxForks) {
    json workers = json::array();
    if (j.contains("workers") && j["workers"].is_array())
      for (const auto& w : j["workers"])
        if (w.is_number_integer() && workers.size() < kMaxChildExits) workers.push_back(w);
    p.pools_broken.push_back({{"workers", std::move(workers)}, {"at_s", at_s}});
  } else if (ev == "signal_handler" && p.signal_handlers.size() < kMaxForks) {
    p.signal_handlers.push_back({{"signal", text_of(j, "signal")},
                                 {"handler", text_of(j, "handler")},
                                 {"where", where_of(j)},
                                 {"at_s", at_s}});
  } else if (ev == "alarm") {
    const auto s = j.find("seconds");
    const double seconds = s != j.end() && s->is_number() ? s->get<double>() : 0;
    const auto ignored = j.find("ignored"), from_handler = j.find("from_handler");
    p.alarm_at.reset();
    // A heartbeat (set again from its own handler) wakes the process whether or not it goes on.
    if (seconds > 0 && seconds < 1e9 && !(ignored != j.end() && *ignored == true) &&
        !(from_handler != j.end() && *from_handler == true))
      p.alarm_at =
          now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    p.alarm_where = where_of(j);
    p.alarm_set = now;
  } else if (ev == "crash_dumps_rearmed") {
    p.crash_dumps_rearmed_over = text_of(j, "over");
  } else if (ev == "exit") {
    p.exit = {{"code", j.contains("code") ? bounded(j["code"]) : json(nullptr)}, {"at_s", at_s}};
    if (j.contains("torch") && j["torch"].is_object()) p.torch = bounded(j["torch"]);
  } else if (ev == "stacks") {
    // Kept apart from the facts: an answer to forkcheck, read by the stacks it takes.
    json threads = json::array();
    if (j.contains("threads") && j["threads"].is_array())
      for (const auto& t : j["threads"]) {
        if (threads.size() >= kMaxThreads) break;
        json one = thread_of(t);
        one["frames"] = frames_of(t, "frames");
        threads.push_back(std::move(one));
      }
    p.last_stacks = std::move(threads);
    ++p.stacks_answers;
  } else if (ev == "argv") {
    if (p.hello.is_object() && j.contains("argv"))
      p.hello["argv"] = bounded(j["argv"], 16 * kMaxText);
  } else {
    drop(ev);  // an event past its bound in this process (or one this forkcheck does not know)
  }
}

void PythonChannel::read_dump_file(Process& p, Clock::time_point now) {
  if (p.dump_file < 0) return;
  char buf[65536];
  for (int round = 0; round < 64; ++round) {
    const ssize_t n = ::pread(p.dump_file, buf, sizeof buf, p.dump_file_read);
    if (n <= 0) return;
    p.dump_file_read += n;
    dump_bytes(p, buf, static_cast<std::size_t>(n), now);
  }
}

void PythonChannel::dump_bytes(Process& p, const char* data, size_t n, Clock::time_point now) {
  // A process asked for its stacks at every stall of a long run: its oldest dumps are let go,
  // never its newest (a crash's comes last).
  if (p.dumps.size() + n > kMaxDumpBytes) {
    const std::size_t drop = std::min(p.dumps.size(), p.dumps.size() + n - kMaxDumpBytes / 2);
    p.dumps.erase(0, drop);
    p.dumps_base += drop;
  }
  p.dumps.append(data, std::min(n, kMaxDumpBytes));
  p.dump_last = now;
}

std::optional<PythonStacksAsk::Offer> PythonChannel::offer(int pid) const {
  auto it = processes_.find(pid);
  if (it == processes_.end() || !it->second->hello.is_object() || !it->second->events_open)
    return std::nullopt;
  const Process& p = *it->second;
  PythonStacksAsk::Offer o;
  o.stacks_signal = p.hello.value("stacks_signal", json()) == stacks_signal();
  o.thread_signal = p.dumps_open && p.hello.value("dump_signal", json()) == dump_signal();
  const json main = p.hello.value("main_thread", json::object());
  o.main_tid = main.is_object() && main.value("native_id", json()).is_number_integer()
                   ? main["native_id"].get<int>()
                   : pid;
  for (const auto& [ident, t] : p.threads)
    if (t["native_id"].is_number_integer()) o.python_tids.push_back(t["native_id"].get<int>());
  if (!o.stacks_signal && !o.thread_signal) return std::nullopt;
  return o;
}

void PythonChannel::drain(int pid, Clock::time_point now) {
  std::vector<int> fds;
  for (const auto& [fd, c] : connections_)
    if (c.pid == pid) fds.push_back(fd);
  for (int fd : fds) read_ready(fd, now);  // reads until the socket has nothing more
  auto it = processes_.find(pid);
  if (it != processes_.end()) read_dump_file(*it->second, now);
}

void PythonChannel::drain_all(Clock::time_point now) {
  for (int fd : connection_fds()) read_ready(fd, now);
  for (auto& [pid, p] : processes_) read_dump_file(*p, now);
}

std::size_t PythonChannel::dump_size(int pid) const {
  auto it = processes_.find(pid);
  return it == processes_.end() ? 0 : it->second->dumps_base + it->second->dumps.size();
}

PythonChannel::Clock::time_point PythonChannel::dump_last(int pid) const {
  auto it = processes_.find(pid);
  return it == processes_.end() ? Clock::time_point() : it->second->dump_last;
}

std::string PythonChannel::dump_slice(int pid, std::size_t from, std::size_t to) const {
  auto it = processes_.find(pid);
  if (it == processes_.end()) return "";
  const Process& p = *it->second;
  if (from < p.dumps_base || to <= from || from - p.dumps_base >= p.dumps.size()) return "";
  return p.dumps.substr(from - p.dumps_base, to - from);
}

std::size_t PythonChannel::stacks_answers(int pid) const {
  auto it = processes_.find(pid);
  return it == processes_.end() ? 0 : it->second->stacks_answers;
}

json PythonChannel::last_stacks(int pid) const {
  auto it = processes_.find(pid);
  return it == processes_.end() ? json(nullptr) : it->second->last_stacks;
}

std::map<std::uint64_t, PythonChannel::ThreadName> PythonChannel::threads_of(int pid) const {
  std::map<std::uint64_t, ThreadName> out;
  auto it = processes_.find(pid);
  if (it == processes_.end()) return out;
  for (const auto& [ident, t] : it->second->threads) {
    ThreadName n;
    n.native_id = t["native_id"].is_number_integer() ? t["native_id"].get<int>() : 0;
    n.name = t.value("name", "");
    out[ident] = n;
  }
  return out;
}

std::vector<PythonChannel::PendingAlarm> PythonChannel::pending_alarms(
    Clock::time_point now) const {
  std::vector<PendingAlarm> out;
  for (const auto& [pid, p] : processes_)
    if (p->alarm_at && *p->alarm_at > now && p->gone_s < 0)
      out.push_back({pid, p->alarm_set, *p->alarm_at, p->alarm_where});
  return out;
}

json PythonChannel::facts() const {
  if (std::all_of(processes_.begin(), processes_.end(),
                  [](const auto& e) { return e.second->adopted; }))
    return nullptr;  // none connected
  json processes = json::array();
  for (const auto& [pid, p] : processes_) {
    if (p->adopted) continue;
    json threads = json::array();
    for (const auto& [ident, t] : p->threads) threads.push_back(t);
    json one = p->hello.is_object() ? p->hello : json({{"pid", pid}});
    one["threads"] = std::move(threads);
    one["forks"] = p->forks;
    one["exceptions"] = p->exceptions;
    one["child_exits"] = p->child_exits;
    one["start_methods"] = p->start_methods;
    one["ends_asked"] = p->ends_asked;
    one["signal_handlers"] = p->signal_handlers;
    one["signals_sent"] = p->signals_sent;
    one["ends_looked"] = p->ends_looked;
    one["pools_broken"] = p->pools_broken;
    one["torch"] = p->torch;
    one["exit"] = p->exit;
    one["test"] = p->current_test();
    one["first_seen_s"] = p->first_seen_s;
    if (p->gone_s >= 0) one["gone_s"] = p->gone_s;
    // A fatal signal's dump (faulthandler's own at SIGSEGV, SIGBUS, SIGABRT...): the crash's
    // Python frames.
    const std::size_t fatal_at = p->dumps.find("Fatal Python error");
    const PyDump dump = fatal_at == std::string::npos
                            ? PyDump()
                            : parse_faulthandler_dump(p->dumps.substr(fatal_at));
    if (!dump.fatal.empty()) {
      json crash = {{"fatal", reports::cap_text(dump.fatal, kMaxText)},
                    {"dumped_by", "faulthandler"},
                    {"threads", json::array()}};
      if (!p->crash_dumps_rearmed_over.empty()) crash["rearmed_over"] = p->crash_dumps_rearmed_over;
      for (const auto& t : dump.threads) {
        json frames = json::array();
        for (const auto& f : t.frames)
          if (frames.size() < kMaxFrames)
            frames.push_back({{"file", f.file}, {"line", f.line}, {"function", f.function}});
        crash["threads"].push_back(
            {{"ident", t.ident}, {"current", t.current}, {"frames", frames}});
      }
      one["crash"] = std::move(crash);
    }
    processes.push_back(std::move(one));
  }
  json by = json::object();
  for (const auto& [why, n] : dropped_by_) by[why] = n;
  return {{"processes", std::move(processes)},
          {"dropped", dropped_},
          {"quiet_folded", quiet_folded_},
          {"dropped_by", std::move(by)},
          {"bounds",
           {{"processes", kMaxProcesses},
            {"forks", kMaxForks},
            {"threaded_forks", kMaxThreadedForks},
            {"exceptions", kMaxExceptions},
            {"child_exits", kMaxChildExits},
            {"threads", kMaxThreads}}}};
}

}  // namespace fc::harness
