#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "harness/supervise/python_attachable.h"
#include "launch/process_tree.h"

namespace fc::harness {
namespace {

// Its link's text names one of the bootstrap's files: "/memfd:NAME (deleted)", or, where Python
// has no memfd_create, "/dev/shm/NAME.PID.N (deleted)".
bool names(const std::string& link, const std::string& name) {
  const std::string deleted = " (deleted)";
  if (link.size() < deleted.size() ||
      link.compare(link.size() - deleted.size(), deleted.size(), deleted) != 0)
    return false;
  if (link == "/memfd:" + name + deleted) return true;
  const auto slash = link.rfind('/');
  return slash != std::string::npos && link.compare(slash + 1, name.size() + 1, name + ".") == 0;
}

std::string read_all(int fd, std::size_t cap) {
  std::string text;
  char buf[16384];
  for (ssize_t n; text.size() < cap &&
                  (n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(text.size()))) > 0;)
    text.append(buf, static_cast<std::size_t>(n));
  return text;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The id a task has in its own, innermost pid namespace: the last of its NSpid line (our own id
// where the kernel shows none).
int innermost_id(const std::string& task_dir, int ours) {
  const std::string status = read_file(task_dir + "/status");
  const auto at = status.find("\nNSpid:");
  if (at == std::string::npos) return ours;
  std::istringstream ids(status.substr(at + 7, status.find('\n', at + 1) - at - 7));
  int id = ours;
  for (int next = 0; ids >> next;) id = next;
  return id;
}

}  // namespace

std::optional<AttachableFiles> attachable_files(int pid, int signal, std::string& why) {
  const std::string proc = "/proc/" + std::to_string(pid);
  DIR* dir = ::opendir((proc + "/fd").c_str());
  if (!dir) return std::nullopt;  // it ended, or is not ours to look into (the stacks say so)
  std::string dumps_fd, threads_fd;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    char link[512];
    const ssize_t n = ::readlink((proc + "/fd/" + e->d_name).c_str(), link, sizeof link - 1);
    if (n <= 0) continue;
    const std::string text(link, static_cast<std::size_t>(n));
    // The lowest-numbered of each, as listed: a process holds one of each of its own.
    if (dumps_fd.empty() && names(text, "forkcheck-py-dumps")) dumps_fd = e->d_name;
    if (threads_fd.empty() && names(text, "forkcheck-py-threads")) threads_fd = e->d_name;
  }
  ::closedir(dir);
  if (dumps_fd.empty() || threads_fd.empty()) return std::nullopt;
  const int threads = ::open((proc + "/fd/" + threads_fd).c_str(), O_RDONLY | O_CLOEXEC);
  if (threads < 0) {
    why = "its bootstrap's files could not be opened";
    return std::nullopt;
  }
  const std::string text = read_all(threads, 1u << 20);
  ::close(threads);
  auto listed = parse_attachable_threads(text, innermost_id(proc, pid), signal, why);
  if (!listed) return std::nullopt;
  // Its threads by the ids it knows them by (its own pid namespace's), to ours.
  std::map<int, int> ours;
  if (DIR* tasks = ::opendir((proc + "/task").c_str())) {
    while (const dirent* e = ::readdir(tasks)) {
      const int tid = std::atoi(e->d_name);
      if (tid > 0) ours[innermost_id(proc + "/task/" + e->d_name, tid)] = tid;
    }
    ::closedir(tasks);
  }
  AttachableFiles files;
  for (auto& t : *listed) {
    const auto our = ours.find(t.tid);
    if (our == ours.end()) continue;  // ended
    // A thread is a /proc entry of its own too: its stat line has its own start time.
    const auto now = launch::process_facts(our->second);
    if (!now || now->start_time != t.start) continue;  // ended, or another with its id
    t.tid = our->second;
    files.threads.push_back(std::move(t));
  }
  files.dump_fd = ::open((proc + "/fd/" + dumps_fd).c_str(), O_RDONLY | O_CLOEXEC);
  if (files.dump_fd < 0) {
    why = "its bootstrap's files could not be opened";
    return std::nullopt;
  }
  return files;
}

}  // namespace fc::harness
