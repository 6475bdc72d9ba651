// shm-bus-error on Linux (the case: shm_bus_error.cc). A storage is what torch makes of a tensor
// it shares: a file in the shm directory (shm_open is open() in /dev/shm), ftruncate'd to the
// storage's size and mapped MAP_SHARED; the worker fills it, the parent maps it by name. The
// variant's storage directory is a tmpfs mounted in a mount namespace of the variant's own (its
// workers inherit it), or a directory on disk.
#include "cases/support/scratch_dir.h"
#include "cases/support/shm_bus_error.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <forkcheck/launch.h>
#include "core/channel.h"
#include "core/pool.h"
#include "launch/process.h"

namespace fc::cases::shm_bus_error {

namespace {

using nlohmann::json;

constexpr int kWorkers = 2;
constexpr int kStorages = 3;                    // per worker, all kept until the parent maps them
constexpr std::size_t kStorageBytes = 1 << 20;  // 1 MiB each: 6 MiB in all
constexpr std::size_t kSmallShm = 4 << 20;      // less than the workers need together
constexpr std::size_t kBigShm = 16 << 20;       // more than they need (docker run --shm-size)

std::string errno_text(const std::string& what, int e) { return what + ": " + std::strerror(e); }

std::string mib(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f MiB", bytes / (1 << 20));
  return b;
}

bool write_file(const char* path, const std::string& text) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

// Enters a mount namespace of this process's own and mounts a tmpfs of `bytes` on `dir`: only
// this process and the workers it starts from now on see it, and it goes away with them. "" on
// success, else what failed with the kernel's errno.
std::string mount_private_tmpfs(const std::string& dir, std::size_t bytes, std::string& how) {
  how = "a mount namespace of its own";
  if (::unshare(CLONE_NEWNS) != 0) {
    const int as_root = errno;
    // Without CAP_SYS_ADMIN: a user namespace of our own grants it over a mount namespace it owns.
    const uid_t uid = ::getuid();
    const gid_t gid = ::getgid();
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
      return errno_text("unshare(CLONE_NEWNS)", as_root) + "; " +
             errno_text("unshare(CLONE_NEWUSER | CLONE_NEWNS)", errno);
    // Files created in the tmpfs need an owner: our own ids, mapped to themselves.
    if (!write_file("/proc/self/setgroups", "deny") ||
        !write_file("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1") ||
        !write_file("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1"))
      return errno_text("mapping ids in the new user namespace", errno);
    how = "a user and a mount namespace of its own (unshare(CLONE_NEWNS): " +
          std::string(std::strerror(as_root)) + ")";
  }
  // A shared root would carry the mount back to the rest of the machine.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return errno_text("mount --make-rprivate /", errno);
  const std::string opts = "size=" + std::to_string(bytes) + ",mode=0700";
  if (::mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, opts.c_str()) != 0)
    return errno_text("mount -t tmpfs -o " + opts + " tmpfs " + dir, errno);
  return "";
}

// A fresh directory under the temp directory, removed (and its mount detached) on every path out.
class StorageDir {
 public:
  StorageDir() = default;
  ~StorageDir() {
    if (mounted_) ::umount2(path().c_str(), MNT_DETACH);  // then the scratch directory goes
  }
  StorageDir(const StorageDir&) = delete;
  StorageDir& operator=(const StorageDir&) = delete;
  std::string path() const { return dir_.path().string(); }
  // Mounts a tmpfs of `bytes` on the directory; `how` says in which namespaces.
  std::string mount_tmpfs(std::size_t bytes, std::string& how) {
    std::string why = mount_private_tmpfs(path(), bytes, how);
    mounted_ = why.empty();
    return why;
  }

 private:
  fc::cases::ScratchDir dir_{"shm"};
  bool mounted_ = false;
};

std::string probe() {
  StorageDir dir;
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return errno_text("pipe2", errno);
  const pid_t pid = ::fork();
  if (pid < 0) return errno_text("fork", errno);
  if (pid == 0) {  // the namespace and its mount end with this child
    ::close(p[0]);
    std::string how;
    const std::string why = mount_private_tmpfs(dir.path(), 1 << 20, how);
    [[maybe_unused]] ssize_t n = ::write(p[1], why.data(), why.size());
    ::_exit(0);
  }
  ::close(p[1]);
  std::string why;
  char b[512];
  for (ssize_t n; (n = ::read(p[0], b, sizeof b)) > 0;) why.append(b, static_cast<size_t>(n));
  ::close(p[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return "the probe that mounts a tmpfs ended with wait status " + std::to_string(status);
  return why.empty() ? "" : "cannot mount a private tmpfs: " + why;
}

struct Space {
  std::string type;
  double total = 0, free = 0;
};

Space space_of(const std::string& dir) {
  struct statfs s {};
  Space out;
  if (::statfs(dir.c_str(), &s) != 0) return out;
  switch (static_cast<unsigned long>(s.f_type)) {
    case TMPFS_MAGIC:
      out.type = "tmpfs";
      break;
    case EXT4_SUPER_MAGIC:
      out.type = "ext4";
      break;
    case XFS_SUPER_MAGIC:
      out.type = "xfs";
      break;
    case BTRFS_SUPER_MAGIC:
      out.type = "btrfs";
      break;
    case OVERLAYFS_SUPER_MAGIC:
      out.type = "overlayfs";
      break;
    default: {
      char b[32];
      std::snprintf(b, sizeof b, "f_type 0x%lx", static_cast<unsigned long>(s.f_type));
      out.type = b;
    }
  }
  out.total = static_cast<double>(s.f_blocks) * static_cast<double>(s.f_frsize);
  out.free = static_cast<double>(s.f_bavail) * static_cast<double>(s.f_frsize);
  return out;
}

std::string storage_name(int worker, int storage) {
  return "w" + std::to_string(worker) + "-s" + std::to_string(storage);
}
unsigned char pattern(int worker, int storage) {
  return static_cast<unsigned char>(0x10 * (worker + 1) + storage + 1);
}

// A worker's batch, as a DataLoader worker makes it: each storage created in the shm directory,
// sized, mapped shared and filled page by page in order (so the first page the kernel could not
// back is the file's first hole). A page that cannot be allocated ends this process with SIGBUS.
FORKCHECK_WORKER(shm_storage_worker) {
  const std::string dir = payload.at("dir").get<std::string>();
  const int w = payload.at("worker").get<int>();
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  json made = json::array();
  for (int s = 0; s < kStorages; ++s) {
    const std::string path = dir + "/" + storage_name(w, s);
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "open " + path);
    // ftruncate only sets the size: it succeeds however little space is left (a sparse file).
    if (::ftruncate(fd, static_cast<off_t>(kStorageBytes)) != 0)
      throw std::system_error(errno, std::generic_category(), "ftruncate " + path);
    void* m = ::mmap(nullptr, kStorageBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (m == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "mmap " + path);
    auto* bytes = static_cast<unsigned char*>(m);
    for (std::size_t off = 0; off < kStorageBytes; off += page)
      std::memset(bytes + off, pattern(w, s), std::min(page, kStorageBytes - off));
    ::munmap(m, kStorageBytes);  // the pages stay in the file for the parent
    made.push_back(storage_name(w, s));
  }
  return {{"worker", w}, {"pid", fc::launch::current_process_id()}, {"storages", made}};
}

// What one storage file holds after the workers: its size, the bytes backed by pages, and its
// first hole (the page its writer was at when it died; the size when it has none).
json inspect(const std::string& dir, int w, int s) {
  const std::string path = dir + "/" + storage_name(w, s);
  json j = {{"name", storage_name(w, s)}};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    j["exists"] = false;
    if (fd >= 0) ::close(fd);
    return j;
  }
  j["exists"] = true;
  j["size"] = st.st_size;
  j["allocated"] = static_cast<long long>(st.st_blocks) * 512;
  j["first_hole"] = static_cast<long long>(::lseek(fd, 0, SEEK_HOLE));
  // The parent's side of sharing: map the storage and read back what its worker wrote. Only a
  // storage backed to its end: reading a hole of a shared tmpfs mapping allocates a page too, and
  // on a full tmpfs that read would end the parent with SIGBUS as well.
  long long wrong = -1;
  if (st.st_size == static_cast<off_t>(kStorageBytes) && j["first_hole"] == st.st_size) {
    void* m = ::mmap(nullptr, kStorageBytes, PROT_READ, MAP_SHARED, fd, 0);
    if (m != MAP_FAILED) {
      const auto* b = static_cast<const unsigned char*>(m);
      wrong =
          std::count_if(b, b + kStorageBytes, [&](unsigned char c) { return c != pattern(w, s); });
      ::munmap(m, kStorageBytes);
    }
  }
  j["bytes_not_as_written"] = wrong;
  ::close(fd);
  return j;
}

}  // namespace

std::string unavailable_reason() {
  static const std::string why = [] {
    try {
      return probe();
    } catch (const std::exception& e) {  // e.g. no temp directory to mount on: listing goes on
      return std::string("cannot probe for a private tmpfs: ") + e.what();
    }
  }();
  return why;
}

fc::CaseResult run(const fc::VariantSpec& variant) {
  const bool on_disk = variant.name == "fork-storage-on-disk";
  const std::size_t shm_bytes = variant.name == "fork-bigger-shm" ? kBigShm : kSmallShm;
  StorageDir dir;
  std::string how = "none: a directory on disk";
  if (!on_disk) {
    if (std::string why = dir.mount_tmpfs(shm_bytes, how); !why.empty())
      return {fc::Outcome::kSkip, "cannot mount a private tmpfs: " + why, json::object()};
  }
  const Space before = space_of(dir.path());
  // The forkserver was forked when this variant started, before the mount, so it and its workers
  // live outside this mount namespace; /proc/<pid>/root resolves paths in this process's.
  const std::string worker_dir =
      variant.start_method == "forkserver"
          ? "/proc/" + std::to_string(fc::launch::current_process_id()) + "/root" + dir.path()
          : dir.path();
  json details = {{"storage_dir", dir.path()},
                  {"workers_open", worker_dir},
                  {"mounted_in", how},
                  {"filesystem", before.type},
                  {"filesystem_bytes", before.total},
                  {"free_bytes_before", before.free},
                  {"storage_bytes", kStorageBytes},
                  {"storages_per_worker", kStorages}};
  fc::channel::send_details(details);
  std::vector<json> payloads;
  for (int i = 0; i < kWorkers; ++i) payloads.push_back({{"worker", i}, {"dir", worker_dir}});
  auto workers = fc::start_pool(variant, "shm_storage_worker", payloads);
  fc::PoolResult pool = fc::join_pool(workers, std::chrono::seconds(20));

  const Space after = space_of(dir.path());
  details["free_bytes_after"] = after.free;
  json storages = json::array();
  std::string dying;  // where each worker that died was writing
  int mapped = 0, wrong = 0;
  for (int w = 0; w < kWorkers; ++w) {
    int last = -1;
    for (int s = 0; s < kStorages; ++s) {
      json j = inspect(dir.path(), w, s);
      if (j["exists"].get<bool>()) last = s;
      if (j.value("bytes_not_as_written", -1LL) == 0) ++mapped;
      if (j.value("bytes_not_as_written", 0LL) != 0) ++wrong;
      storages.push_back(std::move(j));
    }
    const json& end = pool.workers[static_cast<size_t>(w)];
    if (end.value("status", "") != "crash" || last < 0) continue;
    const json& at = storages[static_cast<size_t>(w) * static_cast<size_t>(kStorages) +
                              static_cast<size_t>(last)];
    const long long hole = at["first_hole"].get<long long>();
    const long long page = ::sysconf(_SC_PAGESIZE);
    // Filled in order, so its pages end where the write that could not be backed was.
    dying += std::string(dying.empty() ? "" : ", ") + "worker " + std::to_string(w) + " in " +
             at["name"].get<std::string>() + " (storage " + std::to_string(last + 1) + " of " +
             std::to_string(kStorages) + ") at page " + std::to_string(hole / page) + " of " +
             std::to_string(static_cast<long long>(kStorageBytes) / page) + " (offset " +
             std::to_string(hole) + ")";
  }
  details["storages"] = storages;
  const std::string where = before.type + " of " + mib(before.total) + " at " + dir.path();
  if (pool.outcome != fc::Outcome::kOk) {
    pool.message += "; " + where + ", " + std::to_string(static_cast<long long>(after.free)) +
                    " bytes free after" + (dying.empty() ? "" : "; writers stopped: " + dying);
    return fc::to_case_result(std::move(pool), details);
  }
  if (mapped != kWorkers * kStorages) {
    pool.outcome = fc::Outcome::kError;
    pool.message = "the parent read back " + std::to_string(mapped) + " of " +
                   std::to_string(kWorkers * kStorages) +
                   " storages as their workers wrote them (" + std::to_string(wrong) +
                   " differ) in " + where;
  } else {
    pool.message = "the parent mapped all " + std::to_string(mapped) + " storages (" +
                   mib(static_cast<double>(mapped) * kStorageBytes) + ") that " +
                   std::to_string(kWorkers) + " workers wrote in " + where +
                   ", every byte as written; " + mib(after.free) + " free after";
  }
  return fc::to_case_result(std::move(pool), details);
}

}  // namespace fc::cases::shm_bus_error
