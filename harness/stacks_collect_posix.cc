// Takes the stacks of a hung tree with the first debugger that is installed and
// may attach: eu-stack (fast: no full debug info is loaded), then gdb; /proc
// where neither can. FORKCHECK_STACKS=eu-stack|gdb|proc|none picks one (tests
// use it; so can a user whose debugger misbehaves).
#include <algorithm>
#include <cstdlib>

#include "harness/stacks.h"
#include "harness/supervisor.h"
#include "launch/boost_process_v1.h"

namespace fc::harness {
namespace {

struct Debugger {
  std::string name;  // "eu-stack" or "gdb": also the report's stacks method
  std::string path;
  std::vector<std::string> argv(pid_t pid) const {
    if (name == "gdb")
      return {path,
              "-p",
              std::to_string(pid),
              "-batch",
              "-nx",
              "-q",
              "-ex",
              "set pagination off",
              "-ex",
              "set debuginfod enabled off",
              "-ex",
              "thread apply all bt"};
    return {path, "-m", "-s", "-n", "128", "-p", std::to_string(pid)};
  }
  std::vector<ThreadStack> parse(const std::string& text, pid_t pid) const {
    return name == "gdb" ? parse_gdb_backtraces(text, pid) : parse_eu_stack(text, pid);
  }
};

std::vector<pid_t> dedup(std::vector<pid_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// The debugger to use, or none with the reason.
std::optional<Debugger> choose(const std::string& wanted, std::string& why_none) {
  if (wanted == "proc") {
    why_none = "FORKCHECK_STACKS=" + wanted + " asked for no debugger";
    return std::nullopt;
  }
  std::vector<std::string> names = {"eu-stack", "gdb"};
  if (wanted != "auto") names = {wanted};
  for (const auto& n : names) {
    auto p = bp::search_path(n);
    if (!p.empty()) return Debugger{n, p.string()};
  }
  why_none = wanted == "auto"
                 ? "neither eu-stack (elfutils) nor gdb is installed"
                 : "FORKCHECK_STACKS=" + wanted + ": '" + wanted + "' is not installed";
  return std::nullopt;
}

// gdb knows no thread states and eu-stack no names either; /proc has both.
void add_proc_facts(std::vector<ThreadStack>& threads, pid_t pid) {
  auto proc = proc_threads(pid);
  for (auto& t : threads)
    for (const auto& p : proc)
      if (p.tid == t.tid) {
        t.state = p.state;
        t.wchan = p.wchan;
        if (t.name.empty()) t.name = p.name;
      }
}

}  // namespace

Stacks collect_stacks(const std::vector<pid_t>& pids_in, double time_limit_s) {
  Stacks s;
  auto pids = dedup(pids_in);
  const char* env = std::getenv("FORKCHECK_STACKS");
  const std::string wanted = env && *env ? env : "auto";
  if (wanted == "none") {
    s.method = "none";
    s.note = "FORKCHECK_STACKS=none: stacks were not taken";
    return s;
  }
  if (pids.empty()) {
    s.method = "none";
    s.note = "no process was left to look at";
    return s;
  }
  std::string why_none;
  auto debugger = choose(wanted, why_none);
  if (!debugger) {
    s.method = "proc";
    s.note = why_none + ": thread names, states and wait channels from /proc only";
    for (pid_t p : pids)
      for (auto& t : proc_threads(p)) s.threads.push_back(std::move(t));
    return s;
  }
  // One debugger per process, all at once, under the same supervisor as
  // everything else.
  std::vector<LaunchSpec> specs;
  for (pid_t p : pids) {
    LaunchSpec spec;
    spec.argv = debugger->argv(p);
    spec.timeout_s = time_limit_s;
    spec.grace_s = 0.5;
    spec.channel = false;
    spec.capture_cap = 1u << 20;
    spec.collect_stacks = false;
    specs.push_back(spec);
  }
  std::vector<std::string> refused;
  Supervisor().run(specs, static_cast<int>(specs.size()), [&](size_t i, ChildResult&& r) {
    auto threads = debugger->parse(r.out.text(), pids[i]);
    if (threads.empty()) {
      // Attaching was refused or timed out: say why, and fall back to /proc
      // for this process.
      std::string why = r.err.last_lines(2);
      if (r.deadline_passed)
        why = debugger->name + " did not finish within " + std::to_string(time_limit_s) + " s";
      refused.push_back("pid " + std::to_string(pids[i]) + ": " +
                        (why.empty() ? r.exit.describe() : why));
      threads = proc_threads(pids[i]);
    } else {
      add_proc_facts(threads, pids[i]);
    }
    for (auto& t : threads) s.threads.push_back(std::move(t));
  });
  s.method = refused.size() == pids.size() ? "proc" : debugger->name;
  for (const auto& r : refused)
    s.note += (s.note.empty() ? debugger->name + " could not attach to " : "; ") + r;
  return s;
}

}  // namespace fc::harness
