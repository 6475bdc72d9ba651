// wait_graph.h on Linux: each thread's system call and arguments (/proc/PID/task/TID/syscall,
// through launch::thread_wait), the files its arguments name (/proc/PID/fd, fdinfo), who holds
// them (the fd tables of the tree, then of every process where the tree holds no other end), and
// each Unix socket's peer (sock_diag). Nothing is written to any process: its memory is read only
// for a poll's list of descriptors.
#include "harness/supervise/wait_graph.h"

#include <dirent.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "harness/stacks/stacks.h"
#include "launch/process_tree.h"
#include "launch/syscalls_linux.h"

namespace fc::harness {

namespace {

using On = ThreadWaitFact::On;

std::string line_of_file(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "pipe:[123]" -> ("pipe", 123).
std::pair<std::string, std::uint64_t> file_of(int pid, int fd) {
  char buf[256];
  const std::string link = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  if (n <= 0) return {"", 0};
  const std::string s(buf, static_cast<size_t>(n));
  for (const char* kind : {"pipe", "socket"}) {
    const std::string prefix = std::string(kind) + ":[";
    if (s.rfind(prefix, 0) == 0)
      return {kind, std::strtoull(s.c_str() + prefix.size(), nullptr, 10)};
  }
  return {"other", 0};
}

// The access mode of `fd` (fdinfo's octal flags): O_RDONLY 0, O_WRONLY 1, O_RDWR 2.
int access_mode(int pid, int fd) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/fdinfo/" + std::to_string(fd));
  std::string key;
  while (in >> key) {
    if (key == "flags:") {
      std::string octal;
      in >> octal;
      return static_cast<int>(std::strtoul(octal.c_str(), nullptr, 8) & 3);
    }
    std::string rest;
    std::getline(in, rest);
  }
  return 2;
}

// Every pipe and socket `pid` has open, as holders by inode.
void add_holders(int pid, const std::set<std::uint64_t>* only,
                 std::map<std::uint64_t, std::vector<FileHolder>>& holders) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || end == e->d_name) continue;
    const auto [kind, inode] = file_of(pid, static_cast<int>(fd));
    if (kind != "pipe" && kind != "socket") continue;
    if (only && !only->count(inode)) continue;
    const int mode = access_mode(pid, static_cast<int>(fd));
    holders[inode].push_back({pid, static_cast<int>(fd), mode != 1, mode != 0});
  }
  ::closedir(d);
}

// Each Unix socket's peer, from the kernel's sock_diag (what `ss -x` shows).
std::map<std::uint64_t, std::uint64_t> unix_peers() {
  std::map<std::uint64_t, std::uint64_t> out;
  const int s = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (s < 0) return out;
  struct {
    nlmsghdr h;
    unix_diag_req r;
  } req{};
  req.h.nlmsg_len = sizeof req;
  req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  req.r.sdiag_family = AF_UNIX;
  req.r.udiag_states = ~0u;
  req.r.udiag_show = UDIAG_SHOW_PEER;
  if (::send(s, &req, sizeof req, 0) != static_cast<ssize_t>(sizeof req)) {
    ::close(s);
    return out;
  }
  alignas(nlmsghdr) char buf[32768];
  bool done = false;
  while (!done) {
    const ssize_t n = ::recv(s, buf, sizeof buf, 0);
    if (n <= 0) break;
    auto len = static_cast<unsigned>(n);
    for (auto* h = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
      if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
        done = true;
        break;
      }
      const auto* m = static_cast<const unix_diag_msg*>(NLMSG_DATA(h));
      auto rlen = static_cast<int>(h->nlmsg_len - NLMSG_LENGTH(sizeof *m));
      for (auto* a = reinterpret_cast<rtattr*>(const_cast<unix_diag_msg*>(m + 1)); RTA_OK(a, rlen);
           a = RTA_NEXT(a, rlen))
        if (a->rta_type == UNIX_DIAG_PEER)
          out[m->udiag_ino] = *static_cast<const std::uint32_t*>(RTA_DATA(a));
    }
  }
  ::close(s);
  return out;
}

ThreadWaitFact::File file_for(int pid, std::uint64_t fd, bool to_write) {
  ThreadWaitFact::File f;
  f.fd = static_cast<int>(fd);
  const auto [kind, inode] = file_of(pid, f.fd);
  f.kind = kind.empty() ? "other" : kind;
  f.inode = inode;
  f.to_write = to_write;
  return f;
}

// The descriptors of a poll()/ppoll() list, with what each waits for (POLLOUT: to write).
std::vector<ThreadWaitFact::File> poll_files(int pid, std::uint64_t address, std::uint64_t count) {
  std::vector<ThreadWaitFact::File> out;
  if (count == 0 || count > 256) return out;
  std::vector<pollfd> fds(count);
  iovec local{fds.data(), count * sizeof(pollfd)};
  iovec remote{reinterpret_cast<void*>(address), count * sizeof(pollfd)};
  if (::process_vm_readv(pid, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(local.iov_len))
    return out;
  for (const auto& p : fds)
    if (p.fd >= 0)
      out.push_back(file_for(pid, static_cast<std::uint64_t>(p.fd), (p.events & POLLOUT) != 0));
  return out;
}

// The descriptors an epoll instance watches (its fdinfo's "tfd: N events: HEX" lines).
std::vector<ThreadWaitFact::File> epoll_files(int pid, std::uint64_t epfd) {
  std::vector<ThreadWaitFact::File> out;
  std::ifstream in("/proc/" + std::to_string(pid) + "/fdinfo/" + std::to_string(epfd));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string key, events_key, events;
    std::uint64_t fd = 0;
    if (!(words >> key >> fd >> events_key >> events) || key != "tfd:") continue;
    const unsigned long mask = std::strtoul(events.c_str(), nullptr, 16);
    out.push_back(file_for(pid, fd, (mask & POLLOUT) != 0 && (mask & POLLIN) == 0));
  }
  return out;
}

// Whether the page at `address` of `pid` is memory only processes that share it from the start
// can reach: anonymous (shared) memory, or a file no longer linked ("(deleted)": sem_open's
// named semaphores are unlinked by multiprocessing once made).
bool tree_only_memory(int pid, std::uint64_t address) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const auto dash = line.find('-');
    if (dash == std::string::npos) continue;
    const std::uint64_t from = std::strtoull(line.c_str(), nullptr, 16);
    const std::uint64_t to = std::strtoull(line.c_str() + dash + 1, nullptr, 16);
    if (address < from || address >= to) continue;
    const auto slash = line.find('/');
    const auto bracket = line.find('[');
    if (slash == std::string::npos && bracket == std::string::npos) return true;  // anonymous
    return line.size() > 10 && line.compare(line.size() - 10, 10, " (deleted)") == 0;
  }
  return false;
}

// The mask after `key` ("SigCgt:", "SigIgn:", "SigBlk:") in a /proc status file; nullopt when
// unread.
std::optional<unsigned long long> status_mask(const std::string& path, const char* key) {
  std::ifstream status(path);
  std::string k, mask;
  while (status >> k) {
    if (k == key) {
      status >> mask;
      return std::strtoull(mask.c_str(), nullptr, 16);
    }
    std::string rest;
    std::getline(status, rest);
  }
  return std::nullopt;
}

// Whether `pid` catches SIGALRM, SIGVTALRM or SIGPROF (/proc/PID/status: SigCgt).
bool catches_timer_signals(int pid) {
  const auto caught = status_mask("/proc/" + std::to_string(pid) + "/status", "SigCgt:");
  if (!caught) return false;
  for (int sig : {SIGALRM, SIGVTALRM, SIGPROF})
    if (*caught & (1ull << (sig - 1))) return true;
  return false;
}

ThreadWaitFact fact_of(int pid, int tid, char state) {
  ThreadWaitFact t;
  t.pid = pid;
  t.tid = tid;
  t.thread =
      line_of_file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
  if (state == 't' || state == 'T') {
    t.on = On::kHeld;
    return t;
  }
  const auto w = launch::thread_wait(pid, tid);
  if (state != 'S' || !w || w->syscall < 0) {
    t.on = On::kRunning;
    return t;
  }
  const auto& a = w->args;
  // A poll resumed after a stop (our own debugger's brief attach) is still that poll.
  const long nr = w->resumed >= 0 ? w->resumed : w->syscall;
  t.call = syscall_name(nr);
  if (w->timed) {
    t.on = On::kTimed;
    t.ends_in_s = w->ends_in_s;
    return t;
  }
  if (w->untimed_private_futex || w->pause_without_handler) {
    t.on = On::kOwnProcess;
    return t;
  }
  t.on = On::kOther;  // unless its call and arguments say on what
  if (nr == launch::sys::kFutex && launch::sys::futex_waits(a[1])) {
    // Shared: only processes of the tree can map its memory where it is anonymous or an unlinked
    // file (multiprocessing's semaphores); a file anyone may open could be woken from outside.
    if (tree_only_memory(pid, a[0])) t.on = On::kSharedFutex;
    return t;
  }
  if (!w->args_known) return t;
  if (nr == SYS_wait4 || nr == SYS_waitid) {
    // wait4(pid, ...); waitid(idtype, id, ...): P_PID is 1.
    const auto target = static_cast<int>(nr == SYS_wait4 ? a[0] : (a[0] == 1 ? a[1] : 0));
    t.on = target > 0 ? On::kChild : On::kAnyChild;
    t.child = target > 0 ? target : 0;
  } else if (nr == SYS_read || nr == SYS_readv || nr == SYS_recvfrom || nr == SYS_recvmsg ||
             nr == SYS_pread64) {
    t.on = On::kFiles;
    t.files.push_back(file_for(pid, a[0], false));
  } else if (nr == SYS_write || nr == SYS_writev || nr == SYS_sendto || nr == SYS_sendmsg) {
    t.on = On::kFiles;
    t.files.push_back(file_for(pid, a[0], true));
    if (nr == SYS_write || nr == SYS_sendto) t.bytes = a[2];
  } else if (nr == launch::sys::kPoll || nr == launch::sys::kPpoll) {
    t.on = On::kFiles;
    t.files = poll_files(pid, a[0], a[1]);
  } else if (nr == launch::sys::kEpollWait || nr == launch::sys::kEpollPwait) {
    t.on = On::kFiles;
    t.files = epoll_files(pid, a[0]);
  }
  if (t.on == On::kFiles && t.files.empty()) t.on = On::kOther;
  return t;
}

}  // namespace

bool signal_reaches_main_thread(int pid, int sig) {
  const std::string dir = "/proc/" + std::to_string(pid);
  const auto ignored = status_mask(dir + "/status", "SigIgn:");
  const auto blocked = status_mask(dir + "/task/" + std::to_string(pid) + "/status", "SigBlk:");
  const unsigned long long bit = 1ull << (sig - 1);
  return ignored && blocked && !(*ignored & bit) && !(*blocked & bit);
}

WaitGraphFacts read_wait_graph(int root, const std::vector<int>& pids,
                               std::chrono::milliseconds scan_budget,
                               const std::map<int, std::uint64_t>& started) {
  WaitGraphFacts g;
  g.read = true;
  g.root = root;
  for (int pid : pids) {
    const auto facts = launch::process_facts(pid);
    if (!facts || facts->zombie()) continue;
    if (const auto s = started.find(pid); s != started.end() && s->second != facts->start_time)
      continue;  // another process now: the tree's ended since the look
    g.processes[pid] = {facts->ppid, facts->name, true, catches_timer_signals(pid)};
    for (const auto& [tid, th] : launch::thread_facts(pid))
      g.threads.push_back(fact_of(pid, tid, th.state));
    add_holders(pid, nullptr, g.holders);
  }
  // Sockets' peers, where a thread waits on a socket.
  std::set<std::uint64_t> wanted;
  bool sockets = false;
  for (const auto& t : g.threads)
    for (const auto& f : t.files) sockets = sockets || f.kind == "socket";
  if (sockets) g.peers = unix_peers();
  // The other ends no process of the tree holds: looked for in every other process.
  for (const auto& t : g.threads)
    for (const auto& f : t.files) {
      const std::uint64_t other =
          f.kind == "socket" && g.peers.count(f.inode) ? g.peers[f.inode] : f.inode;
      const auto h = g.holders.find(other);
      const bool held_in_tree =
          h != g.holders.end() &&
          std::any_of(h->second.begin(), h->second.end(), [&](const FileHolder& x) {
            return f.kind == "socket" || (f.to_write ? x.reads : x.writes);
          });
      if (!held_in_tree && (f.kind == "pipe" || f.kind == "socket")) wanted.insert(other);
    }
  if (wanted.empty()) return g;
  const auto look_in = [&](int pid) {
    if (g.processes.count(pid)) return;
    std::map<std::uint64_t, std::vector<FileHolder>> held;
    add_holders(pid, &wanted, held);
    const auto facts = launch::process_facts(pid);
    if (held.empty() || !facts) return;
    g.processes[pid] = {facts->ppid, facts->name, false, false};
    for (auto& [inode, hs] : held)
      for (auto& x : hs) g.holders[inode].push_back(x);
  };
  // The tree's ancestors first, whatever the time: an end the tree inherited is most often held
  // by what started it (a shell, a test runner, forkcheck), and they are few.
  std::set<int> ancestors;
  for (auto facts = launch::process_facts(root); facts && facts->ppid > 0;
       facts = launch::process_facts(facts->ppid)) {
    if (!ancestors.insert(facts->ppid).second) break;
    look_in(facts->ppid);
  }
  DIR* d = ::opendir("/proc");
  if (!d) return g;
  // The rest within the budget. What it does not reach stays not seen (unknown).
  const auto until = std::chrono::steady_clock::now() + scan_budget;
  while (dirent* e = ::readdir(d)) {
    if (std::chrono::steady_clock::now() > until) break;
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0 || ancestors.count(static_cast<int>(pid))) continue;
    look_in(static_cast<int>(pid));
  }
  ::closedir(d);
  return g;
}

}  // namespace fc::harness
