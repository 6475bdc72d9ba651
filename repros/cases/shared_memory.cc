#include "cases/shared_memory.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace fc::cases {
namespace {

[[noreturn]] void fail(const std::string& what, int err = errno) {
  throw std::system_error(err, std::generic_category(), what);
}

void* map(int fd, std::size_t bytes, const std::string& name) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  ::close(fd);  // the mapping keeps the segment; the descriptor is not needed
  if (p == MAP_FAILED) fail("mmap " + name, err);
  return p;
}

}  // namespace

SharedSegment::SharedSegment(std::string name, void* data, std::size_t size, pid_t creator)
    : name_(std::move(name)), data_(data), size_(size), creator_(creator) {}

SharedSegment::SharedSegment(SharedSegment&& o) noexcept
    : name_(std::move(o.name_)), data_(o.data_), size_(o.size_), creator_(o.creator_),
      unlinked_(o.unlinked_) {
  o.data_ = nullptr;
  o.creator_ = -1;
}

SharedSegment SharedSegment::create(const std::string& prefix, std::size_t bytes) {
  static std::atomic<int> counter{0};
  std::string name = "/forkcheck-" + prefix + "-" + std::to_string(::getpid()) + "-" +
                     std::to_string(counter++);
  int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) fail("shm_open " + name);
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {  // new pages read as zeros
    const int err = errno;
    ::close(fd);
    ::shm_unlink(name.c_str());
    fail("ftruncate " + name, err);
  }
  void* p = nullptr;
  try {
    p = map(fd, bytes, name);
  } catch (...) {
    ::shm_unlink(name.c_str());
    throw;
  }
  return SharedSegment(std::move(name), p, bytes, ::getpid());
}

SharedSegment SharedSegment::open(const std::string& name, std::size_t bytes) {
  int fd = ::shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) fail("shm_open " + name);
  return SharedSegment(name, map(fd, bytes, name), bytes, -1);
}

void SharedSegment::unlink() {
  // A fork child holds a copy of this object but not the name: only the creator removes it.
  if (unlinked_ || creator_ != ::getpid()) return;
  ::shm_unlink(name_.c_str());
  unlinked_ = true;
}

SharedSegment::~SharedSegment() {
  unlink();
  if (data_ != nullptr) ::munmap(data_, size_);
}

bool shm_exists(const std::string& name) {
  struct stat st {};
  return ::stat(("/dev/shm" + name).c_str(), &st) == 0;
}

void init_process_shared_mutex(pthread_mutex_t* m) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  const int rc = pthread_mutex_init(m, &a);
  pthread_mutexattr_destroy(&a);
  if (rc != 0) fail("pthread_mutex_init", rc);
}

SharedLock::SharedLock(pthread_mutex_t* m, std::chrono::seconds timeout) : m_(m) {
  const double t0 = monotonic_s();
  timespec until{};
  clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_sec += static_cast<time_t>(timeout.count());
  const int rc = pthread_mutex_clocklock(m_, CLOCK_MONOTONIC, &until);
  if (rc == EOWNERDEAD) {
    // The holder died mid-update: the protected state cannot be trusted, so this is an error.
    pthread_mutex_consistent(m_);
    pthread_mutex_unlock(m_);
    throw std::runtime_error("the cross-process lock's holder died while holding it");
  }
  if (rc == ETIMEDOUT)
    throw std::runtime_error("the cross-process lock was not free within " +
                             std::to_string(timeout.count()) + " s");
  if (rc != 0) fail("pthread_mutex_clocklock", rc);
  waited_s_ = monotonic_s() - t0;
}

SharedLock::~SharedLock() { pthread_mutex_unlock(m_); }

namespace {

// Kept in plain arrays: the handler may only make async-signal-safe calls.
constexpr int kMaxPaths = 8;
char g_paths[kMaxPaths][256];
std::atomic<int> g_path_count{0};
std::atomic<pid_t> g_owner{-1};

void remove_and_reraise(int sig) {
  if (::getpid() == g_owner.load()) {
    for (int i = 0; i < g_path_count.load(); ++i)  // in order: a directory's files come first
      if (::unlink(g_paths[i]) != 0) ::rmdir(g_paths[i]);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void remove_on_termination(const std::string& path) {
  const int i = g_path_count.load();
  if (i >= kMaxPaths || path.size() >= sizeof g_paths[0])
    throw std::length_error("remove_on_termination: too many paths or too long: " + path);
  std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
  g_path_count.store(i + 1);
  if (g_owner.exchange(::getpid()) != ::getpid()) {
    struct sigaction sa {};
    sa.sa_handler = remove_and_reraise;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGTERM, &sa, nullptr);
    ::sigaction(SIGINT, &sa, nullptr);
  }
}

double monotonic_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace fc::cases
