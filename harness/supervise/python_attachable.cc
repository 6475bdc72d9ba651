#include "harness/supervise/python_attachable.h"

#include <cstdlib>
#include <map>
#include <sstream>

namespace fc::harness {

std::optional<std::vector<AttachableThread>> parse_attachable_threads(const std::string& text,
                                                                      int pid, int signal,
                                                                      std::string& why) {
  std::istringstream in(text);
  std::string header;
  std::getline(in, header);
  const std::string expected =
      "forkcheck-py-threads pid=" + std::to_string(pid) + " signal=" + std::to_string(signal);
  if (header.rfind("forkcheck-py-threads pid=", 0) != 0) {
    why = "its threads file does not say whose it is";
    return std::nullopt;
  }
  if (header != expected) {
    const int owner = std::atoi(header.c_str() + header.find('=') + 1);
    why = owner != pid ? "its bootstrap's files are pid " + std::to_string(owner) +
                             "'s, inherited at fork (its Python could not make its own)"
                       : "its bootstrap listens on another signal than this forkcheck's (" +
                             header.substr(header.rfind(' ') + 1) + ")";
    return std::nullopt;
  }
  std::map<int, AttachableThread> by_tid;
  for (std::string line; std::getline(in, line);) {
    // The last line, unended, may be one being written: "+4" of "+4711 loader".
    if (in.eof() || line.size() < 2 || line[0] != '+') continue;
    char* end = nullptr;
    const long tid = std::strtol(line.c_str() + 1, &end, 10);
    if (tid <= 0 || end == line.c_str() + 1 || *end != ' ') continue;
    char* after = nullptr;
    const unsigned long long start = std::strtoull(end + 1, &after, 10);
    if (after == end + 1 || (*after != ' ' && *after != '\0')) continue;
    AttachableThread t;
    t.tid = static_cast<int>(tid);
    t.start = start;
    t.name = *after == ' ' ? std::string(after + 1) : std::string();
    by_tid[t.tid] = std::move(t);
  }
  std::vector<AttachableThread> threads;
  for (auto& [tid, t] : by_tid) threads.push_back(std::move(t));
  return threads;
}

}  // namespace fc::harness
