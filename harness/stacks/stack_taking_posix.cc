// Takes the stacks of a hung tree with the first debugger that is installed and
// may attach: eu-stack (fast: no full debug info is loaded), then gdb; what the
// OS says about the threads (proc_threads: /proc on Linux, libproc on macOS)
// where neither can. FORKCHECK_STACKS=eu-stack|gdb|proc|none picks one (tests
// use it; so can a user whose debugger misbehaves).
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "harness/stacks/stack_taking.h"
#include "launch/boost_process_v1.h"

namespace fc::harness {
namespace {

std::vector<std::string> debugger_argv(const std::string& name, const std::string& path,
                                       pid_t pid) {
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

std::vector<pid_t> dedup(std::vector<pid_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// gdb knows no thread states and eu-stack no names either; the OS has both, and what each
// thread is blocked in.
void add_proc_facts(std::vector<ThreadStack>& threads, pid_t pid) {
  auto proc = proc_threads(pid);
  for (auto& t : threads)
    for (const auto& p : proc)
      if (p.tid == t.tid) {
        t.state = p.state;
        t.wchan = p.wchan;
        t.syscall = p.syscall;
        if (t.name.empty()) t.name = p.name;
      }
}

// What the "proc" method gives, for the report's note. macOS has neither eu-stack nor gdb as a
// rule, and its own debugger, lldb, is not wired in: no frames there.
#ifdef __APPLE__
constexpr const char* kOsThreadFacts =
    "thread names and states from libproc only (no frames: forkcheck does not drive lldb)";
#else
constexpr const char* kOsThreadFacts = "thread names, states and wait channels from /proc only";
#endif

}  // namespace

StackTaking::StackTaking(const std::vector<ProcessId>& pids_in, double budget_s)
    : pids_(dedup(pids_in)), time_limit_s_(budget_s) {
  const char* env = std::getenv("FORKCHECK_STACKS");
  const std::string wanted = env && *env ? env : "auto";
  if (wanted == "none") {
    stacks_.method = "none";
    stacks_.note = "FORKCHECK_STACKS=none: stacks were not taken";
    return;
  }
  if (pids_.empty()) {
    stacks_.method = "none";
    stacks_.note = "no process was left to look at";
    return;
  }
  std::string why_none;
  if (wanted == "proc") {
    why_none = "FORKCHECK_STACKS=" + wanted + " asked for no debugger";
  } else {
    std::vector<std::string> names = {"eu-stack", "gdb"};
    if (wanted != "auto") names = {wanted};
    for (const auto& n : names) {
      auto p = bp::search_path(n);
      if (!p.empty()) {
        debugger_ = Debugger{n, p.string()};
        break;
      }
    }
    if (!debugger_)
      why_none = wanted == "auto"
                     ? "neither eu-stack (elfutils) nor gdb is installed"
                     : "FORKCHECK_STACKS=" + wanted + ": '" + wanted + "' is not installed";
  }
  if (!debugger_) {
    stacks_.method = "proc";
    stacks_.note = why_none + ": " + kOsThreadFacts;
    for (pid_t p : pids_)
      for (auto& t : proc_threads(p)) stacks_.threads.push_back(std::move(t));
    return;
  }
  for (pid_t p : pids_) {
    LaunchSpec spec;
    spec.argv = debugger_argv(debugger_->name, debugger_->path, p);
    spec.timeout_s = budget_s;  // less when it starts late: the supervisor sets what is left
    spec.grace_s = 0.5;
    spec.channel = false;
    spec.capture_cap = 1u << 20;
    spec.collect_stacks = false;
    commands_.push_back(spec);
  }
  pending_ = commands_.size();
  answered_.assign(commands_.size(), false);
}

void StackTaking::add_result(size_t i, const ChildResult& r) {
  const pid_t pid = pids_.at(i);
  if (answered_.at(i)) return;
  answered_[i] = true;
  auto threads = debugger_->name == "gdb" ? parse_gdb_backtraces(r.out.text(), pid)
                                          : parse_eu_stack(r.out.text(), pid);
  if (threads.empty()) {
    // Attaching was refused or timed out: say why, and fall back to the OS's facts for this
    // process.
    std::string why = r.started ? r.err.last_lines(2) : r.start_error;
    if (r.deadline_passed) {
      char buf[64];
      std::snprintf(buf, sizeof buf, " did not finish within the stacks budget (%.1f s)",
                    time_limit_s_);
      why = debugger_->name + buf;
    }
    refused_.push_back("pid " + std::to_string(pid) + ": " +
                       (why.empty() ? r.exit.describe() : why));
    threads = proc_threads(pid);
  } else {
    add_proc_facts(threads, pid);
  }
  for (auto& t : threads) stacks_.threads.push_back(std::move(t));
  --pending_;
}

Stacks StackTaking::take(const std::string& why_short) {
  if (debugger_ && pending_ > 0) {
    for (size_t i = 0; i < pids_.size(); ++i) {
      if (answered_[i]) continue;
      for (auto& t : proc_threads(pids_[i])) stacks_.threads.push_back(std::move(t));
      refused_.push_back("pid " + std::to_string(pids_[i]) + ": " + why_short);
    }
    pending_ = 0;
  }
  if (debugger_) {
    stacks_.method = refused_.size() == pids_.size() ? "proc" : debugger_->name;
    // Each process's reason, the first few of them: a tree of hundreds must not make a note of
    // tens of KiB.
    constexpr size_t kNamed = 5;
    for (size_t i = 0; i < refused_.size() && i < kNamed; ++i)
      stacks_.note += (i == 0 ? debugger_->name + " could not attach to " : "; ") + refused_[i];
    if (refused_.size() > kNamed)
      stacks_.note += "; and " + std::to_string(refused_.size() - kNamed) + " more processes";
  }
  return std::move(stacks_);
}

}  // namespace fc::harness
