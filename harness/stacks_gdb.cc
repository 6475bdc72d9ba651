#include <algorithm>
#include <regex>
#include <sstream>

#include "harness/stacks.h"
#include "harness/supervisor.h"
#include "launch/boost_process_v1.h"

namespace fc::harness {
namespace {

// "Thread 2 (Thread 0x7f.. (LWP 15384) "locker_ab"):"  -- the name part is absent in old gdbs.
const std::regex kThread(R"(^Thread \d+ \(.*LWP (\d+)\)(?: \"(.*)\")?\):)");
// "#3  0x00007f.. in GOMP_parallel () from /lib/x86_64-linux-gnu/libgomp.so.1"
// "#7  lock_a_then_b () at /tmp/dl.cc:6"   (inlined frames have no address)
const std::regex kFrame(R"(^#\d+\s+(?:0x[0-9a-f]+ in )?(.*?)(?: (at|from) (\S+))?$)");

// "(anonymous namespace)::f (x=1, y=...)" -> "(anonymous namespace)::f": the arguments start at
// the first " (" that does not open "(anonymous namespace)".
std::string function_name(std::string s) {
  const std::string anon = "(anonymous namespace)";
  size_t from = 0;
  for (;;) {
    size_t p = s.find(" (", from);
    if (p == std::string::npos) return s;
    if (s.compare(p + 1, anon.size(), anon) == 0) {
      from = p + 1 + anon.size();
      continue;
    }
    return s.substr(0, p);
  }
}

std::vector<pid_t> dedup(std::vector<pid_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace

std::vector<ThreadStack> parse_gdb_backtraces(const std::string& text, int pid) {
  std::vector<ThreadStack> threads;
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, kThread)) {
      ThreadStack t;
      t.pid = pid;
      t.tid = std::stoi(m[1]);
      t.name = m[2];
      threads.push_back(std::move(t));
    } else if (!threads.empty() && std::regex_search(line, m, kFrame)) {
      StackFrame f;
      f.function = function_name(m[1]);
      if (m[2].matched) f.where = m[2].str() + " " + m[3].str();
      threads.back().frames.push_back(std::move(f));
    }
  }
  // gdb lists threads newest first; the main thread (tid == pid) reads best first.
  std::stable_sort(threads.begin(), threads.end(),
                   [](const ThreadStack& a, const ThreadStack& b) { return a.tid < b.tid; });
  return threads;
}

Stacks collect_stacks(const std::vector<pid_t>& pids_in, double time_limit_s) {
  Stacks s;
  auto pids = dedup(pids_in);
  if (pids.empty()) {
    s.method = "none";
    s.note = "no process was left to look at";
    return s;
  }
  const auto gdb = bp::search_path("gdb");
  if (gdb.empty()) {
    s.method = "proc";
    s.note = "gdb is not installed: thread names, states and wait channels from /proc only";
    for (pid_t p : pids)
      for (auto& t : proc_threads(p)) s.threads.push_back(std::move(t));
    return s;
  }
  // One gdb per process, all at once, under the same supervisor as everything else.
  std::vector<LaunchSpec> specs;
  for (pid_t p : pids) {
    LaunchSpec spec;
    spec.argv = {gdb.string(), "-p", std::to_string(p), "-batch", "-nx", "-q",
                 "-ex", "set pagination off", "-ex", "set debuginfod enabled off",
                 "-ex", "thread apply all bt"};
    spec.timeout_s = time_limit_s;
    spec.grace_s = 0.5;
    spec.channel = false;
    spec.capture_cap = 1u << 20;
    spec.collect_stacks = false;
    specs.push_back(spec);
  }
  std::vector<std::string> refused;
  Supervisor().run(specs, static_cast<int>(specs.size()), [&](size_t i, ChildResult&& r) {
    auto threads = parse_gdb_backtraces(r.out.text(), pids[i]);
    if (threads.empty()) {
      // Attaching was refused or timed out: say why, and fall back to /proc for this process.
      std::string why = r.err.last_lines(2);
      if (r.deadline_passed) why = "gdb did not finish within " + std::to_string(time_limit_s) + " s";
      refused.push_back("pid " + std::to_string(pids[i]) + ": " + (why.empty() ? r.exit.describe() : why));
      threads = proc_threads(pids[i]);
    }
    // gdb knows no thread states; /proc does.
    auto proc = proc_threads(pids[i]);
    for (auto& t : threads)
      for (const auto& p : proc)
        if (p.tid == t.tid) {
          t.state = p.state;
          t.wchan = p.wchan;
          if (t.name.empty()) t.name = p.name;
        }
    for (auto& t : threads) s.threads.push_back(std::move(t));
  });
  s.method = refused.size() == pids.size() ? "proc" : "gdb";
  if (!refused.empty())
    for (const auto& r : refused) s.note += (s.note.empty() ? "gdb could not attach to " : "; ") + r;
  return s;
}

}  // namespace fc::harness
