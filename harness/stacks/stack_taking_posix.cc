// Takes the stacks of a hung tree with the first debugger that is installed and
// may attach: eu-stack (fast: no full debug info is loaded), then gdb; what the
// OS says about the threads (proc_threads: /proc on Linux, libproc on macOS)
// where neither can. FORKCHECK_STACKS=eu-stack|gdb|proc|none picks one (tests
// use it; so can a user whose debugger misbehaves).
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "harness/stacks/stack_taking.h"
#include "launch/boost_process_v1.h"

namespace fc::harness {
namespace {

// Between gdb's native backtraces and its Python ones in one run's output.
constexpr const char* kPyBtMarker = "==forkcheck: py-bt==";

std::vector<std::string> gdb_argv(const std::string& path, pid_t pid, bool python) {
  std::vector<std::string> argv = {path,         "-p", std::to_string(pid),
                                   "-batch",     "-nx", "-q",
                                   "-ex",        "set pagination off",
                                   "-ex",        "set debuginfod enabled off",
                                   "-ex",        "thread apply all bt"};
  if (python) {
    for (const std::string& c :
         {std::string("echo \\n") + kPyBtMarker + "\\n", std::string("thread apply all py-bt")}) {
      argv.push_back("-ex");
      argv.push_back(c);
    }
  }
  return argv;
}

std::vector<std::string> debugger_argv(const std::string& name, const std::string& path,
                                       pid_t pid) {
  if (name == "gdb") return gdb_argv(path, pid, false);
  return {path, "-m", "-s", "-n", "128", "-p", std::to_string(pid)};
}

bool exists(const std::string& path) { return ::access(path.c_str(), R_OK) == 0; }

// Where gdb auto-loads CPython's extension for `interpreter` from (Debian: python3-dbg puts it in
// /usr/share/gdb/auto-load; Fedora in /usr/lib/debug).
bool has_python_gdb_extension(const std::string& interpreter) {
  char real[PATH_MAX];
  const std::string file = ::realpath(interpreter.c_str(), real) ? real : interpreter;
  return exists("/usr/share/gdb/auto-load" + file + "-gdb.py") ||
         exists("/usr/lib/debug" + file + "-gdb.py");
}

std::vector<pid_t> dedup(std::vector<pid_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// gdb knows no thread states and eu-stack no names either; the OS has both, and what each
// thread is blocked in.
// `proc`: what the OS said of the threads before any debugger attached (an attach interrupts a
// timed wait: read after it, the thread is "in restart_syscall").
void add_proc_facts(std::vector<ThreadStack>& threads, const std::vector<ThreadStack>& proc) {
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
    for (pid_t p : pids_) {
      if (!python_interpreter(p).empty()) ++python_processes_;
      for (auto& t : proc_threads(p)) stacks_.threads.push_back(std::move(t));
    }
    python_why_ = why_none;
    return;
  }
  const auto gdb = bp::search_path("gdb");
  for (pid_t p : pids_) before_attach_[p] = proc_threads(p);
  for (pid_t p : pids_) {
    LaunchSpec spec;
    bool python = false;
    if (const std::string interpreter = python_interpreter(p); !interpreter.empty()) {
      ++python_processes_;
      if (wanted != "auto" && wanted != "gdb")
        python_why_ = "FORKCHECK_STACKS=" + wanted + " asked for no gdb";
      else if (gdb.empty())
        python_why_ = "gdb is not installed (Debian: apt install gdb python3-dbg)";
      else if (!has_python_gdb_extension(interpreter))
        python_why_ = "CPython's gdb extension is not installed for " + interpreter +
                      " (Debian: apt install python3-dbg)";
      else
        python = true;
    }
    with_python_.push_back(python);
    spec.argv = python ? gdb_argv(gdb.string(), p, true)
                       : debugger_argv(debugger_->name, debugger_->path, p);
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
  std::string text = r.out.text(), python_text;
  if (with_python_.at(i)) {
    if (const auto at = text.find(kPyBtMarker); at != std::string::npos) {
      python_text = text.substr(at);
      text.resize(at);
    }
  }
  auto threads = with_python_.at(i) || debugger_->name == "gdb" ? parse_gdb_backtraces(text, pid)
                                                                 : parse_eu_stack(text, pid);
  if (with_python_.at(i) && !threads.empty()) {
    std::string missing;
    if (parse_gdb_py_backtraces(python_text, threads, missing) > 0)
      ++python_read_;
    else if (python_text.empty())
      python_why_ = "gdb did not get as far as py-bt";
    else if (!missing.empty())
      python_why_ = missing;
    else if (python_why_.empty())
      python_why_ = "py-bt printed no Python frame";
  }
  if (threads.empty()) {
    // Attaching was refused or timed out: say why, and fall back to the OS's facts for this
    // process.
    std::string why = r.started ? r.err.last_lines(2) : r.start_error;
    if (r.deadline_passed) {
      char buf[64];
      std::snprintf(buf, sizeof buf, " did not finish within the stacks budget (%.1f s)",
                    time_limit_s_);
      why = (with_python_.at(i) ? std::string("gdb (with py-bt)") : debugger_->name) + buf;
    }
    refused_.push_back("pid " + std::to_string(pid) + ": " +
                       (why.empty() ? r.exit.describe() : why));
    threads = proc_threads(pid);
  } else {
    add_proc_facts(threads, before_attach_[pid]);
  }
  for (auto& t : threads) stacks_.threads.push_back(std::move(t));
  --pending_;
}

Stacks StackTaking::take(const std::string& why_short) {
  if (debugger_ && pending_ > 0) {
    for (size_t i = 0; i < pids_.size(); ++i) {
      if (answered_[i]) continue;
      for (auto& t : proc_threads(pids_[i])) stacks_.threads.push_back(std::move(t));
      refused_.push_back("pid " + std::to_string(pids_[i]) + " (" +
                         (with_python_.at(i) ? std::string("gdb with py-bt") : debugger_->name) +
                         "): " + why_short);
    }
    pending_ = 0;
  }
  if (python_processes_ > 0) {
    const std::string of = std::to_string(python_processes_) + " Python process" +
                           (python_processes_ == 1 ? "" : "es");
    if (python_read_ > 0)
      stacks_.python_note = "Python frames of " + std::to_string(python_read_) + " of " + of +
                            " read with gdb and CPython's gdb extension (py-bt)";
    if (python_read_ < python_processes_)
      stacks_.python_note += (python_read_ > 0 ? "; the others: " : "no Python frames for " + of +
                                                                         ": ") +
                             (python_why_.empty() ? "gdb did not finish" : python_why_);
  }
  if (debugger_) {
    stacks_.method = refused_.size() == pids_.size() ? "proc" : debugger_->name;
    // Each process's reason, the first few of them: a tree of hundreds must not make a note of
    // tens of KiB.
    constexpr size_t kNamed = 5;
    for (size_t i = 0; i < refused_.size() && i < kNamed; ++i)
      stacks_.note += (i == 0 ? "no debugger's stacks for " : "; ") + refused_[i];
    if (refused_.size() > kNamed)
      stacks_.note += "; and " + std::to_string(refused_.size() - kNamed) + " more processes";
  }
  return std::move(stacks_);
}

}  // namespace fc::harness
