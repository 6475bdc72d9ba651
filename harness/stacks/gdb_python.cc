// CPython's gdb extension (Debian: python3-dbg) prints each thread's Python frames with
// `thread apply all py-bt`:
//   Thread 1 (Thread 0x7f.. (LWP 17786) "python3"):
//   Traceback (most recent call first):
//     File "/usr/lib/python3.11/threading.py", line 320, in wait
//       waiter.acquire()
//     <built-in method acquire of _thread.lock object at 0x7f..>
//   Thread 2 (...):
//   Unable to locate python frame
// Read here into the threads' `python` frames, matched by LWP.
#include <cstdlib>
#include <regex>
#include <sstream>

#include "harness/stacks/stacks.h"

namespace fc::harness {
namespace {

const std::regex kPyGdbThread(R"(^Thread \d+ \(.*LWP (\d+)\))");
const std::regex kPyGdbFile(R"re(^\s+File "(.*)", line (\d+), in (.*)$)re");
const std::regex kPyGdbBuiltin(R"(^\s+<(built-in .*?)(?: at (?:remote )?0x[0-9a-f]+)?>$)");

}  // namespace

size_t parse_gdb_py_backtraces(const std::string& text, std::vector<ThreadStack>& threads,
                               std::string& missing) {
  missing.clear();
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  ThreadStack* current = nullptr;
  bool unknown_command = false, any_unlocated = false;
  size_t with_frames = 0;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, kPyGdbThread)) {
      const int tid = static_cast<int>(std::strtol(m[1].str().c_str(), nullptr, 10));
      current = nullptr;
      for (auto& t : threads)
        if (t.tid == tid) current = &t;
      if (current && !current->python.empty())
        current = nullptr;  // a second listing: keep the first
      continue;
    }
    if (line.find("Undefined command: \"py-bt\"") != std::string::npos) unknown_command = true;
    if (line.find("Unable to locate python frame") != std::string::npos) any_unlocated = true;
    if (!current) continue;
    if (std::regex_search(line, m, kPyGdbFile)) {
      if (current->python.empty()) ++with_frames;
      PyFrame f;
      f.file = m[1];
      f.line = static_cast<int>(std::strtol(m[2].str().c_str(), nullptr, 10));
      f.function = m[3];
      current->python.push_back(std::move(f));
    } else if (std::regex_search(line, m, kPyGdbBuiltin)) {
      if (current->python.empty()) ++with_frames;
      PyFrame f;
      f.function = m[1];
      current->python.push_back(std::move(f));
    } else if (!current->python.empty() && current->python.back().code.empty() &&
               !current->python.back().file.empty() && line.rfind("    ", 0) == 0) {
      current->python.back().code = line.substr(line.find_first_not_of(' '));
    }
  }
  if (with_frames == 0) {
    if (unknown_command)
      missing = "gdb has no py-bt: CPython's gdb extension is not installed for this interpreter";
    else if (any_unlocated)
      missing = "py-bt found no Python frame (CPython's debug symbols may be missing)";
  }
  return with_frames;
}

}  // namespace fc::harness
