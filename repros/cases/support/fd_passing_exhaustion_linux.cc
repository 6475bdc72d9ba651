// fd-passing-exhaustion on Linux (the case: fd_passing_exhaustion.cc). Each worker makes its
// storages in POSIX shared memory and hands them to the parent over a Unix socket: as a
// descriptor (SCM_RIGHTS, torch's file_descriptor strategy: the name is unlinked at once) or as
// the name (torch's file_system strategy). The parent keeps every storage it received mapped,
// and under the descriptor strategy also its descriptor, as torch's allocator does
// (ALLOCATOR_MAPPED_KEEPFD).
#include "cases/support/fd_passing_exhaustion.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <forkcheck/launch.h>
#include "core/channel.h"
#include "core/pool.h"
#include "launch/process.h"

namespace fc::cases::fd_passing_exhaustion {

namespace {

using nlohmann::json;

constexpr int kWorkers = 2;
constexpr int kStorages = 24;                    // per worker: 48 in all
constexpr std::size_t kStorageBytes = 64 << 10;  // small: the count is what matters
constexpr rlim_t kLowLimit = 32;                 // ulimit -n 32
constexpr rlim_t kHigherLimit = 1024;            // the usual default soft limit
constexpr int kAcceptWithinMs = 20000;           // bounds a worker that never connects

// One message per storage, as multiprocessing's resource_sharer sends one descriptor per
// connection; storage -1 ends a worker's stream.
struct Message {
  std::int32_t worker;
  std::int32_t storage;
  char name[48];  // the file_system strategy's shm name; empty for descriptors
};

[[noreturn]] void fail(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

unsigned char pattern(int worker, int storage) {
  return static_cast<unsigned char>(0x10 * (worker + 1) + storage + 1);
}

// Descriptors open in this process, and the highest, counted without opening one (at the limit
// opendir("/proc/self/fd") itself would fail).
struct OpenCount {
  int open = 0;
  int highest = -1;
};
OpenCount open_descriptors(rlim_t below) {
  OpenCount c;
  for (int fd = 0; fd < static_cast<int>(std::min<rlim_t>(below, 1 << 16)); ++fd)
    if (::fcntl(fd, F_GETFD) != -1) ++c.open, c.highest = fd;
  return c;
}

rlim_t soft_limit() {
  struct rlimit r {};
  ::getrlimit(RLIMIT_NOFILE, &r);
  return r.rlim_cur;
}
void set_soft_limit(rlim_t soft) {
  struct rlimit r {};
  ::getrlimit(RLIMIT_NOFILE, &r);
  r.rlim_cur = std::min(soft, r.rlim_max);
  if (::setrlimit(RLIMIT_NOFILE, &r) != 0) fail("setrlimit(RLIMIT_NOFILE)");
}

std::string shm_name(int worker, int storage) {
  return "/forkcheck-fd-" + std::to_string(fc::launch::current_process_id()) + "-" +
         std::to_string(worker) + "-" + std::to_string(storage);
}

FORKCHECK_WORKER(fd_storage_sender) {
  const int w = payload.at("worker").get<int>();
  const bool by_name = payload.at("strategy").get<std::string>() == "file_system";
  const std::string path = payload.at("socket").get<std::string>();
  const int sock = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (sock < 0) fail("socket");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (::connect(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    fail("connect " + path);
  std::vector<int> kept;  // torch caches each storage's descriptor with the storage
  std::vector<std::string> names;
  for (int s = 0; s < kStorages; ++s) {
    const std::string name = shm_name(w, s);
    const int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) fail("shm_open " + name);
    if (::ftruncate(fd, kStorageBytes) != 0) fail("ftruncate");
    void* m = ::mmap(nullptr, kStorageBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) fail("mmap");
    std::memset(m, pattern(w, s), kStorageBytes);
    ::munmap(m, kStorageBytes);
    Message msg{w, s, {}};
    iovec io{&msg, sizeof msg};
    msghdr mh{};
    mh.msg_iov = &io;
    mh.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    if (by_name) {
      std::strncpy(msg.name, name.c_str(), sizeof msg.name - 1);
      names.push_back(name);
      ::close(fd);
    } else {
      ::shm_unlink(name.c_str());  // file_descriptor: only the descriptor names it now
      mh.msg_control = control;
      mh.msg_controllen = sizeof control;
      cmsghdr* c = CMSG_FIRSTHDR(&mh);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
      kept.push_back(fd);
    }
    if (::sendmsg(sock, &mh, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof msg))
      fail("sendmsg storage " + std::to_string(s));
  }
  Message end{w, -1, {}};
  if (::send(sock, &end, sizeof end, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof end))
    fail("send end");
  // The storages live until the parent says it is done with them (or is gone).
  char done = 0;
  [[maybe_unused]] ssize_t n = ::recv(sock, &done, 1, 0);
  for (int fd : kept) ::close(fd);
  for (const auto& name : names) ::shm_unlink(name.c_str());  // the parent may have already
  ::close(sock);
  return {{"worker", w}, {"pid", fc::launch::current_process_id()}, {"sent", kStorages}};
}

// What the parent holds: each storage mapped, and its descriptor under file_descriptor.
struct Received {
  std::vector<std::pair<void*, int>> storages;
  ~Received() {
    for (auto [m, fd] : storages) {
      ::munmap(m, kStorageBytes);
      if (fd >= 0) ::close(fd);
    }
  }
};

// Maps a storage and checks it holds what its worker wrote; `keep_fd` keeps the descriptor.
std::string take(Received& r, int fd, bool keep_fd, int w, int s) {
  void* m = ::mmap(nullptr, kStorageBytes, PROT_READ, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return "mmap: " + why;
  }
  if (!keep_fd) ::close(fd);
  r.storages.emplace_back(m, keep_fd ? fd : -1);
  const auto* b = static_cast<const unsigned char*>(m);
  if (std::any_of(b, b + kStorageBytes, [&](unsigned char c) { return c != pattern(w, s); }))
    return "its bytes are not the ones its worker wrote";
  return "";
}

class Listener {
 public:
  Listener() {
    path_ = (std::filesystem::temp_directory_path() /
             ("forkcheck-fd-" + std::to_string(fc::launch::current_process_id()) + ".sock"))
                .string();
    ::unlink(path_.c_str());
    fd_ = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd_ < 0) fail("socket");
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path_.size() >= sizeof addr.sun_path) throw std::runtime_error("socket path too long");
    std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) fail("bind " + path_);
    if (::listen(fd_, kWorkers) != 0) fail("listen");
  }
  ~Listener() {
    for (int c : conns_) ::close(c);
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  const std::string& path() const { return path_; }
  const std::vector<int>& conns() const { return conns_; }
  // Accepts every worker's connection; false when one did not come within kAcceptWithinMs.
  bool accept_all() {
    while (conns_.size() < kWorkers) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, kAcceptWithinMs) <= 0) return false;
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) fail("accept4");
      conns_.push_back(c);
    }
    return true;
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::vector<int> conns_;
};

}  // namespace

std::string unavailable_reason() { return ""; }

fc::CaseResult run(const fc::VariantSpec& variant) {
  const bool by_name = variant.name == "fork-file-system";
  const rlim_t limit = variant.name == "fork-higher-limit" ? kHigherLimit : kLowLimit;
  const std::string strategy = by_name ? "file_system" : "file_descriptor";
  Listener listener;
  std::vector<json> payloads;
  for (int i = 0; i < kWorkers; ++i)
    payloads.push_back({{"worker", i}, {"socket", listener.path()}, {"strategy", strategy}});
  auto workers = fc::start_pool(variant, "fd_storage_sender", payloads);
  if (!listener.accept_all()) {
    fc::PoolResult pool = fc::join_pool(workers, std::chrono::seconds(5));
    if (pool.outcome == fc::Outcome::kOk) pool.outcome = fc::Outcome::kError;
    pool.message = "not every worker connected to the parent: " + pool.message;
    return fc::to_case_result(std::move(pool));
  }

  // The receiver alone runs under the limit, from the moment its workers are connected.
  const rlim_t before = soft_limit();
  set_soft_limit(limit);
  const rlim_t applied = soft_limit();
  Received received;
  int arrived = 0, truncated = 0, ended = 0, peak_open = 0;
  json first_truncation, bad = json::array();
  std::vector<pollfd> polls;
  for (int c : listener.conns()) polls.push_back({c, POLLIN, 0});
  while (ended < kWorkers) {
    if (::poll(polls.data(), polls.size(), kAcceptWithinMs) <= 0) break;
    for (auto& p : polls) {
      if (!(p.revents & (POLLIN | POLLHUP))) continue;
      Message msg{};
      iovec io{&msg, sizeof msg};
      alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
      msghdr mh{};
      mh.msg_iov = &io;
      mh.msg_iovlen = 1;
      mh.msg_control = control;
      mh.msg_controllen = sizeof control;
      const ssize_t n = ::recvmsg(p.fd, &mh, MSG_CMSG_CLOEXEC);
      if (n <= 0) {  // the worker is gone without its end message
        p.fd = -1;
        ++ended;
        continue;
      }
      if (msg.storage < 0) {
        p.fd = -1;  // poll ignores it from now on
        ++ended;
        continue;
      }
      ++arrived;
      int items = 0, fd = -1;
      for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
        ++items;
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
            c->cmsg_len >= CMSG_LEN(sizeof(int)))
          std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
      }
      const OpenCount now = open_descriptors(applied);
      peak_open = std::max(peak_open, now.open);
      std::string why;
      if (by_name) {
        fd = ::shm_open(msg.name, O_RDWR | O_CLOEXEC, 0);
        why = fd < 0 ? std::string("shm_open: ") + std::strerror(errno)
                     : take(received, fd, false, msg.worker, msg.storage);
        ::shm_unlink(msg.name);  // the receiver owns it now (torch: its shm manager)
      } else if (fd < 0) {
        ++truncated;
        if (first_truncation.is_null())
          first_truncation = {{"worker", msg.worker},
                              {"storage", msg.storage},
                              {"message_number", arrived},
                              {"ancdata_items", items},
                              {"msg_ctrunc", (mh.msg_flags & MSG_CTRUNC) != 0},
                              {"descriptors_open", now.open},
                              {"highest_open", now.highest},
                              {"rlimit_nofile", static_cast<long long>(applied)},
                              {"storages_held", received.storages.size()}};
        continue;
      } else {
        why = take(received, fd, true, msg.worker, msg.storage);
      }
      if (!why.empty())
        bad.push_back({{"worker", msg.worker}, {"storage", msg.storage}, {"why", why}});
    }
  }
  const OpenCount at_end = open_descriptors(applied);
  peak_open = std::max(peak_open, at_end.open);
  set_soft_limit(before);
  for (int c : listener.conns()) ::send(c, "d", 1, MSG_NOSIGNAL);  // the workers may end now
  fc::PoolResult pool = fc::join_pool(workers, std::chrono::seconds(20));

  const int total = kWorkers * kStorages;
  json details = {{"strategy", strategy},
                  {"rlimit_nofile", static_cast<long long>(applied)},
                  {"storages_sent", total},
                  {"messages_arrived", arrived},
                  {"storages_mapped", received.storages.size()},
                  {"truncated", truncated},
                  {"peak_descriptors_open", peak_open},
                  {"not_as_written", bad}};
  if (!first_truncation.is_null()) details["first_truncation"] = first_truncation;
  if (pool.outcome != fc::Outcome::kOk) return fc::to_case_result(std::move(pool), details);

  const std::string held =
      std::to_string(received.storages.size()) + " of " + std::to_string(total) + " storages";
  if (!first_truncation.is_null()) {
    const json& t = first_truncation;
    pool.outcome = fc::Outcome::kError;
    pool.message =
        "the parent's recvmsg for worker " + std::to_string(t["worker"].get<int>()) +
        "'s storage " + std::to_string(t["storage"].get<int>()) + " (message " +
        std::to_string(t["message_number"].get<int>()) + ") received " +
        std::to_string(t["ancdata_items"].get<int>()) + " items of ancdata" +
        (t["msg_ctrunc"].get<bool>() ? " with MSG_CTRUNC set" : " (MSG_CTRUNC not set)") +
        ": RLIMIT_NOFILE " + std::to_string(t["rlimit_nofile"].get<long long>()) + " with " +
        std::to_string(t["descriptors_open"].get<int>()) + " descriptors open (highest " +
        std::to_string(t["highest_open"].get<int>()) + "); " + std::to_string(truncated) + " of " +
        std::to_string(arrived) +
        " messages came without their descriptor, the parent "
        "holds " +
        held;
  } else if (!bad.empty() || static_cast<int>(received.storages.size()) != total) {
    pool.outcome = fc::Outcome::kError;
    pool.message = "the parent holds " + held + " (" + std::to_string(bad.size()) +
                   " could not be taken: " + (bad.empty() ? "" : bad[0]["why"].get<std::string>()) +
                   ")";
  } else {
    pool.message = "the parent received and mapped all " + std::to_string(total) + " storages by " +
                   (by_name ? "shm name" : "descriptor") + ", every byte as written, under " +
                   "RLIMIT_NOFILE " + std::to_string(static_cast<long long>(applied)) +
                   " with at most " + std::to_string(peak_open) + " descriptors open";
  }
  return fc::to_case_result(std::move(pool), details);
}

}  // namespace fc::cases::fd_passing_exhaustion
