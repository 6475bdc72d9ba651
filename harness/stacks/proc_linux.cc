#include <dirent.h>

#include <algorithm>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "harness/stacks/stacks.h"

namespace fc::harness {
namespace {

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

}  // namespace

std::vector<ThreadStack> proc_threads(pid_t pid) {
  std::vector<ThreadStack> out;
  const std::string base = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = ::opendir(base.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    long tid = std::strtol(e->d_name, &end, 10);
    if (tid <= 0 || *end != '\0') continue;
    const std::string dir = base + "/" + e->d_name;
    ThreadStack t;
    t.pid = pid;
    t.tid = static_cast<int>(tid);
    t.name = first_line(dir + "/comm");
    std::string stat = first_line(dir + "/stat");
    auto close = stat.rfind(')');
    if (close != std::string::npos && close + 2 < stat.size()) t.state = stat.substr(close + 2, 1);
    t.wchan = first_line(dir + "/wchan");
    if (t.wchan == "0") t.wchan.clear();
    // The kernel stack, when readable (root): where in the kernel the thread
    // waits.
    std::ifstream kstack(dir + "/stack");
    std::string line;
    while (std::getline(kstack, line)) {
      auto sp = line.find(' ');
      t.frames.push_back({sp == std::string::npos ? line : line.substr(sp + 1), "(kernel)"});
    }
    out.push_back(std::move(t));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(),
            [](const ThreadStack& a, const ThreadStack& b) { return a.tid < b.tid; });
  return out;
}

}  // namespace fc::harness
