// What CPython's faulthandler writes (the Python bootstrap's stacks on demand, and its dump at a
// fatal signal), read into threads and frames. Its format, the same from 3.6 to 3.13:
//   Fatal Python error: Segmentation fault        (at a fatal signal only)
//
//   Thread 0x00007f2e8c7fc700 (most recent call first):
//     File "/usr/lib/python3.11/threading.py", line 320 in wait
//     File "train.py", line 12 in flush
//   Current thread 0x00007f2e91a6b740 (most recent call first):
//     File "train.py", line 40 in <module>
// A thread's ident is CPython's (pthread_self), not the OS's thread id; later versions may add a
// thread's name in brackets after it. One thread's own dump (all_threads=False) has no ident:
//   Stack (most recent call first):
//     File "train.py", line 12 in flush
#include <cstdlib>
#include <regex>
#include <sstream>

#include "harness/stacks/stacks.h"

namespace fc::harness {
namespace {

const std::regex kDumpThread(
    R"(^(Current thread|Thread) (0x[0-9a-fA-F]+)(?: \[(.*)\])? \(most recent call first\):)");
const std::regex kDumpOwnStack(R"(^Stack \(most recent call first\):)");
const std::regex kDumpFrame(R"re(^\s+File "(.*)", line (\d+) in (.*)$)re");
const std::regex kDumpFatal(R"(^Fatal Python error: (.*)$)");

}  // namespace

PyDump parse_faulthandler_dump(const std::string& text) {
  PyDump dump;
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  PyDumpThread* current = nullptr;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (std::regex_search(line, m, kDumpFatal)) {
      dump.fatal = m[1];
      continue;
    }
    if (std::regex_search(line, m, kDumpThread)) {
      PyDumpThread t;
      t.current = m[1] == "Current thread";
      t.ident = std::strtoull(m[2].str().c_str(), nullptr, 16);
      t.name = m[3];
      dump.threads.push_back(std::move(t));
      current = &dump.threads.back();
      continue;
    }
    if (std::regex_search(line, m, kDumpOwnStack)) {
      PyDumpThread t;
      t.current = true;
      dump.threads.push_back(std::move(t));
      current = &dump.threads.back();
      continue;
    }
    if (current && std::regex_search(line, m, kDumpFrame)) {
      // Ours, on any OS ("\\" on Windows).
      const std::string file = m[1], ours = "forkcheck_boot.py";
      if (file.size() > ours.size() &&
          file.compare(file.size() - ours.size(), ours.size(), ours) == 0 &&
          (file[file.size() - ours.size() - 1] == '/' ||
           file[file.size() - ours.size() - 1] == '\\'))
        continue;
      PyFrame f;
      f.file = m[1];
      f.line = static_cast<int>(std::strtol(m[2].str().c_str(), nullptr, 10));
      f.function = m[3];
      current->frames.push_back(std::move(f));
    } else if (line.empty()) {
      current = nullptr;  // a blank line ends a thread's block
    }
  }
  return dump;
}

}  // namespace fc::harness
