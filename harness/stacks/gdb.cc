// gdb's `thread apply all bt` output, read into threads and frames.
#include <algorithm>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "harness/stacks/stacks.h"

namespace fc::harness {
namespace {

// "Thread 2 (Thread 0x7f.. (LWP 15384) "locker_ab"):"  -- the name part is
// absent in old gdbs.
const std::regex kGdbThread(R"(^Thread \d+ \(.*LWP (\d+)\)(?: \"(.*)\")?\):)");
// "#3  0x00007f.. in GOMP_parallel () from /lib/x86_64-linux-gnu/libgomp.so.1"
// "#7  lock_a_then_b () at /tmp/dl.cc:6"   (inlined frames have no address)
const std::regex kGdbFrame(R"(^#\d+\s+(?:0x[0-9a-f]+ in )?(.*?)(?: (at|from) (\S+))?$)");

}  // namespace

std::vector<ThreadStack> parse_gdb_backtraces(const std::string& text, int pid) {
  std::vector<ThreadStack> threads;
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, kGdbThread)) {
      ThreadStack t;
      t.pid = pid;
      t.tid = static_cast<int>(
          std::strtol(m[1].str().c_str(), nullptr, 10));  // no throw on 99999999999
      t.name = m[2];
      threads.push_back(std::move(t));
    } else if (!threads.empty() && std::regex_search(line, m, kGdbFrame)) {
      StackFrame f;
      f.function = function_name_only(m[1]);
      if (m[2].matched) f.where = m[2].str() + " " + m[3].str();
      threads.back().frames.push_back(std::move(f));
    }
  }
  // gdb lists threads newest first; the main thread (tid == pid) reads best
  // first.
  std::stable_sort(threads.begin(), threads.end(),
                   [](const ThreadStack& a, const ThreadStack& b) { return a.tid < b.tid; });
  return threads;
}

}  // namespace fc::harness
