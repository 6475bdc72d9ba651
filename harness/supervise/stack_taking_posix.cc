// Takes the stacks of a tree with the debuggers the request allows for each process: eu-stack
// (fast: no full debug info is loaded; a brief stop), gdb with CPython's extension for the Python
// frames of a process it may stop long; what the OS says about the threads (proc_threads: /proc
// on Linux, libproc on macOS) where no debugger may or can attach. FORKCHECK_STACKS=eu-stack|
// gdb|proc|none picks one (tests use it; so can a user whose debugger misbehaves).
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "harness/platform/host.h"
#include "harness/supervise/classify.h"
#include "harness/supervise/stack_taking.h"
#include "reports/text.h"

namespace fc::harness {
namespace {

// Between gdb's native backtraces and its Python ones in one run's output.
constexpr const char* kPyBtMarker = "==forkcheck: py-bt==";

std::vector<std::string> gdb_argv(const std::string& path, pid_t pid, bool python) {
  std::vector<std::string> argv = {path,
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
  if (python) {
    for (const std::string& c :
         {std::string("echo \\n") + kPyBtMarker + "\\n", std::string("thread apply all py-bt")}) {
      argv.push_back("-ex");
      argv.push_back(c);
    }
  }
  return argv;
}

std::vector<std::string> debugger_argv(const std::string& name, const std::string& path, pid_t pid,
                                       bool source_lines) {
  if (name == "gdb") return gdb_argv(path, pid, false);
  if (!source_lines) return {path, "-m", "-n", "128", "-p", std::to_string(pid)};
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

StackTaking::StackTaking(const StacksRequest& request, const std::set<ProcessId>& python_dumping)
    : attached_(request.attached),
      python_dumping_(python_dumping),
      dumps_pending_(python_dumping.size()) {
  const char* env = std::getenv("FORKCHECK_STACKS");
  const std::string wanted = env && *env ? env : "auto";
  if (wanted == "none") {
    stacks_.method = "none";
    stacks_.note = "FORKCHECK_STACKS=none: stacks were not taken";
    return;
  }
  if (request.processes.empty()) {
    stacks_.method = "none";
    stacks_.note = "no process was left to look at";
    return;
  }
  const std::string eu = wanted == "auto" || wanted == "eu-stack" ? find_in_path("eu-stack") : "";
  const std::string gdb = wanted == "auto" || wanted == "gdb" ? find_in_path("gdb") : "";
  if (wanted == "proc")
    none_why_ = "FORKCHECK_STACKS=proc asked for no debugger";
  else if (eu.empty() && gdb.empty())
    none_why_ = wanted == "auto"
                    ? "neither eu-stack (elfutils) nor gdb is installed"
                    : "FORKCHECK_STACKS=" + wanted + ": '" + wanted + "' is not installed";
  // The OS's view of every thread, before anything attaches.
  for (const auto& [pid, attach] : request.processes) before_attach_[pid] = proc_threads(pid);
  for (const auto& [pid, attach] : request.processes) {
    const std::string interpreter = python_interpreter(pid);
    // Its own bootstrap gives its Python frames (no debugger needed for those, and none stops it).
    const bool dumping = python_dumping_.count(pid) > 0;
    const bool is_python = !interpreter.empty() || dumping;
    if (is_python) ++python_processes_;
    Command c;
    c.pid = pid;
    if (attach == Attach::kNone) {
      refused_.push_back("pid " + std::to_string(pid) +
                         ": not attached to, it was not asleep (a debugger would have stopped it)");
      if (is_python && !dumping)
        python_why_ = "a process that may be working is not stopped for gdb";
      continue;
    }
    if (!none_why_.empty()) {
      if (is_python && !dumping) python_why_ = none_why_;
      continue;
    }
    const bool gdb_fits = request.budget_s >= kGdbNeedsS || eu.empty();
    if (is_python && !dumping && attach == Attach::kLong && gdb_fits && !gdb.empty() &&
        has_python_gdb_extension(interpreter)) {
      c.debugger = "gdb";
      c.python = true;
    } else {
      if (is_python && !dumping) {
        const std::string budget = "gdb reads Python frames in seconds, and " +
                                   reports::format_tenths(request.budget_s) +
                                   " were left for stacks";
        if (!gdb_fits)
          python_why_ = budget;
        else if (attach != Attach::kLong)
          python_why_ =
              "gdb would stop a process that is only asleep for seconds: not used before "
              "it is stuck or time is called";
        else if (gdb.empty())
          python_why_ = "gdb is not installed (Debian: apt install gdb python3-dbg)";
        else
          python_why_ = "CPython's gdb extension is not installed for " + interpreter +
                        " (Debian: apt install python3-dbg)";
      }
      if (!eu.empty())
        c.debugger = "eu-stack";
      else if (attach == Attach::kLong || wanted == "gdb")
        c.debugger = "gdb";
      else {
        refused_.push_back("pid " + std::to_string(pid) +
                           ": eu-stack is not installed, and gdb would stop a process that is "
                           "only asleep for seconds");
        continue;
      }
    }
    c.budget_s =
        attach == Attach::kBrief ? std::min(request.brief_s, request.budget_s) : request.budget_s;
    LaunchSpec spec;
    spec.argv = c.python ? gdb_argv(gdb, pid, true)
                         : debugger_argv(c.debugger, c.debugger == "gdb" ? gdb : eu, pid,
                                         request.source_lines);
    spec.timeout_s =
        std::max(0.1, c.budget_s);  // less when it starts late: the supervisor sets what is left
    spec.grace_s = 0.2;
    spec.channel = false;
    spec.capture_cap = 1u << 20;
    spec.collect_stacks = false;
    commands_.push_back(spec);
    targets_.push_back(pid);
    planned_.push_back(c);
  }
  pending_ = commands_.size();
  answered_.assign(commands_.size(), false);
  // What no debugger looks at, the OS says.
  std::set<ProcessId> attached(targets_.begin(), targets_.end());
  for (const auto& [pid, threads] : before_attach_)
    if (!attached.count(pid))
      for (const auto& t : threads) stacks_.threads.push_back(t);
}

void StackTaking::add_result(size_t i, const ChildResult& r) {
  if (answered_.at(i)) return;
  answered_[i] = true;
  const Command& c = planned_.at(i);
  const pid_t pid = c.pid;
  std::string text = r.out.text(), python_text;
  if (c.python) {
    if (const auto at = text.find(kPyBtMarker); at != std::string::npos) {
      python_text = text.substr(at);
      text.resize(at);
    }
  }
  auto threads = c.debugger == "gdb" ? parse_gdb_backtraces(text, pid) : parse_eu_stack(text, pid);
  const bool any_frame = std::any_of(threads.begin(), threads.end(),
                                     [](const ThreadStack& t) { return !t.frames.empty(); });
  if (c.python && any_frame) {
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
  if (!any_frame) {
    // Attaching was refused, or it overran its budget and was killed (its process released):
    // say why, and fall back to what the OS said of the process before it attached.
    std::string why = r.started ? r.err.last_lines(2) : r.start_error;
    if (time_was_called(r)) {
      why = (c.python ? std::string("gdb (with py-bt)") : c.debugger) +
            " did not finish within its " + reports::format_tenths(c.budget_s) +
            ": killed, and the process released";
    } else if (why.empty()) {
      why = c.debugger + " printed no frame (" + r.exit.describe() + ")";
    } else {
      why = c.debugger + ": " + why;
    }
    refused_.push_back("pid " + std::to_string(pid) + ": " + why);
    threads = before_attach_[pid];
  } else {
    methods_.insert(c.debugger);
    add_proc_facts(threads, before_attach_[pid]);
  }
  for (auto& t : threads) stacks_.threads.push_back(std::move(t));
  --pending_;
}

void StackTaking::add_python_dump(ProcessId pid, PyDump dump,
                                  const std::map<std::uint64_t, PyThreadName>& threads,
                                  std::vector<std::string> unread) {
  if (!python_dumping_.count(pid) || dumps_.count(pid)) return;
  dumps_[pid] = Dump{std::move(dump), threads};
  unread_.insert(unread_.end(), std::make_move_iterator(unread.begin()),
                 std::make_move_iterator(unread.end()));
  --dumps_pending_;
}

// A Python dump's frames onto the threads of its process: by the OS thread id its bootstrap
// named for each CPython thread ident, the main thread's by the process id; a thread it could
// not place is kept as one of its own (CPython before 3.8 tells no thread's OS id).
static void merge_python_dump(std::vector<ThreadStack>& all, ProcessId pid, const PyDump& dump,
                              const std::map<std::uint64_t, StackTaking::PyThreadName>& names) {
  size_t unplaced_main = 0;
  for (const auto& t : dump.threads)
    if (!names.count(t.ident)) ++unplaced_main;
  for (const auto& t : dump.threads) {
    auto known = names.find(t.ident);
    if (t.tid != 0 && (known == names.end() || known->second.native_id != t.tid)) {
      known = names.end();  // asked by its OS id: its name, if told, is found by that
      for (auto n = names.begin(); n != names.end(); ++n)
        if (n->second.native_id == t.tid) known = n;
    }
    int tid = t.tid != 0 ? t.tid : known != names.end() ? known->second.native_id : 0;
    // One thread it did not name: the main thread (the one the bootstrap never saw start).
    if (tid == 0 && known == names.end() && unplaced_main == 1) tid = pid;
    ThreadStack* into = nullptr;
    for (auto& th : all)
      if (th.pid == pid && tid != 0 && th.tid == tid) into = &th;
    if (!into) {
      ThreadStack extra;
      extra.pid = pid;
      extra.tid = tid;
      all.push_back(extra);
      into = &all.back();
    }
    into->python = t.frames;
    if (known != names.end() && !known->second.name.empty())
      into->name = known->second.name;
    else if (!t.name.empty())
      into->name = t.name;
    else if (tid == pid && into->name.empty())
      into->name = "MainThread";
  }
}

Stacks StackTaking::take(const std::string& why_short) {
  for (size_t i = 0; i < planned_.size(); ++i) {
    if (answered_[i]) continue;
    const Command& c = planned_[i];
    for (const auto& t : before_attach_[c.pid]) stacks_.threads.push_back(t);
    refused_.push_back("pid " + std::to_string(c.pid) + " (" +
                       (c.python ? std::string("gdb with py-bt") : c.debugger) + "): " + why_short);
    answered_[i] = true;
  }
  pending_ = 0;
  size_t dumped = 0;
  std::vector<std::string> silent;
  for (ProcessId pid : python_dumping_) {
    auto d = dumps_.find(pid);
    if (d == dumps_.end() || d->second.dump.threads.empty()) {
      silent.push_back(std::to_string(pid));
      continue;
    }
    ++dumped;
    merge_python_dump(stacks_.threads, pid, d->second.dump, d->second.threads);
  }
  dumps_pending_ = 0;
  python_read_ += dumped;
  if (dumped > 0) methods_.insert("faulthandler");
  if (python_processes_ > 0) {
    // Of those this taking looked at (a stall's stuck process alone, say), not of the program.
    const std::string of =
        reports::counted(python_processes_, "Python process", "Python processes") + " looked at";
    if (dumped > 0)
      stacks_.python_note = "Python frames of " + std::to_string(dumped) + " of " + of +
                            ", from the program itself (each thread asked on its own, or the "
                            "main thread for all under the GIL: nothing was stopped)";
    if (python_read_ > dumped)
      stacks_.python_note += std::string(stacks_.python_note.empty() ? "" : "; ") +
                             "Python frames of " + std::to_string(python_read_ - dumped) +
                             " read with gdb and CPython's gdb extension (py-bt)";
    if (!silent.empty() && python_why_.empty())
      python_why_ = "pid " + silent.front() + (silent.size() > 1 ? " and others" : "") +
                    (unread_.empty() ? " did not answer in time"
                                     : " gave none: the threads above were not read");
    // The threads not read, the first few (a tree of hundreds must not make a note of KiBs).
    constexpr size_t kUnreadNamed = 4;
    for (size_t i = 0; i < unread_.size() && i < kUnreadNamed; ++i)
      stacks_.python_note += std::string(stacks_.python_note.empty() ? "" : "; ") +
                             (i == 0 ? "not read: " : "") + unread_[i];
    if (unread_.size() > kUnreadNamed)
      stacks_.python_note +=
          "; and " + reports::counted(unread_.size() - kUnreadNamed, "thread", "threads") + " more";
    if (python_read_ < python_processes_)
      stacks_.python_note +=
          (python_read_ > 0              ? "; the others: "
           : stacks_.python_note.empty() ? "no Python frames for " + of + ": "
                                         : "; no Python frames for " + of + ": ") +
          (python_why_.empty() ? "gdb did not finish" : python_why_) +
          (attached_ ? "; a Python process gives its frames itself where its job was started "
                       "with the lines `forkcheck attach --env` prints"
                     : "");
  }
  if (stacks_.method.empty()) {
    if (methods_.empty())
      stacks_.method = "proc";
    else
      for (const auto& m : methods_) stacks_.method += (stacks_.method.empty() ? "" : "+") + m;
  }
  if (!none_why_.empty()) stacks_.note = none_why_ + ": " + kOsThreadFacts;
  // Each process's reason, the first few of them: a tree of hundreds must not make a note of
  // tens of KiB.
  constexpr size_t kNamed = 5;
  for (size_t i = 0; i < refused_.size() && i < kNamed; ++i)
    stacks_.note +=
        (i == 0 ? std::string(stacks_.note.empty() ? "" : "; ") + "no debugger's stacks for "
                : "; ") +
        refused_[i];
  if (refused_.size() > kNamed)
    stacks_.note += "; and " + std::to_string(refused_.size() - kNamed) + " more processes";
  return std::move(stacks_);
}

}  // namespace fc::harness
