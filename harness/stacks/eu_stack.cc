// eu-stack's output (elfutils), read into threads and frames. eu-stack unwinds
// from .eh_frame and names frames from the symbol tables without loading full
// debug info, so it takes a tenth of a second where gdb takes seconds on a
// libtorch process.
#include <algorithm>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "harness/stacks/stacks.h"

namespace fc::harness {
namespace {

// "TID 4625:"
const std::regex kEuThread(R"(^TID (\d+):)");
// "#1  0x00007f2fef4a92e0 __cxa_guard_acquire -
// /usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30"
// "#0  0x00007f07624f7823 - /usr/lib/x86_64-linux-gnu/libgomp.so.1.0.0"   (no
// symbol)
const std::regex kEuFrame(R"(^#\d+\s+0x[0-9a-f]+ ?(.*)$)");
// "    /work/main/repros/cases/static_init_fork.cc:45:19"   (the line under a
// frame, with -s)
const std::regex kEuSource(R"(^\s+(.*?):(\d+)(?::\d+)?$)");

// "name - module", "- module" or "name": the module follows the last " - ".
StackFrame frame_of(const std::string& rest) {
  StackFrame f;
  std::string name = rest;
  if (name.rfind("- ", 0) == 0) {
    f.where = "from " + name.substr(2);
    name.clear();
  } else if (auto dash = name.rfind(" - "); dash != std::string::npos) {
    f.where = "from " + name.substr(dash + 3);
    name.resize(dash);
  }
  f.function = name.empty() ? "??" : function_name_only(name);
  return f;
}

}  // namespace

std::vector<ThreadStack> parse_eu_stack(const std::string& text, int pid) {
  std::vector<ThreadStack> threads;
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, kEuThread)) {
      ThreadStack t;
      t.pid = pid;
      t.tid = static_cast<int>(
          std::strtol(m[1].str().c_str(), nullptr, 10));  // no throw on 99999999999
      threads.push_back(std::move(t));
    } else if (threads.empty()) {
      continue;
    } else if (std::regex_match(line, m, kEuFrame)) {
      threads.back().frames.push_back(frame_of(m[1]));
    } else if (std::regex_match(line, m, kEuSource) && !threads.back().frames.empty()) {
      threads.back().frames.back().where = "at " + m[1].str() + ":" + m[2].str();
    }
  }
  std::stable_sort(threads.begin(), threads.end(),
                   [](const ThreadStack& a, const ThreadStack& b) { return a.tid < b.tid; });
  return threads;
}

}  // namespace fc::harness
