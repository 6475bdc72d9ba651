// The supervisor's mechanism on POSIX: start, read, look, signal, reap. What it decides is the
// watchdog's (watchdog.h); this file only does it.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <set>

#include "harness/platform/host.h"
#include "harness/platform/process_handle.h"
#include "harness/platform/process_info.h"
#include "harness/supervise/channel_reader.h"
#include "harness/supervise/child_environment.h"
#include "harness/supervise/child_start_posix.h"
#include "harness/supervise/classify.h"
#include "harness/supervise/clock.h"
#include "harness/supervise/debugger_slots.h"
#include "harness/supervise/guardian.h"
#include "harness/supervise/interrupt.h"
#include "harness/supervise/job_core.h"
#include "harness/supervise/job_tree.h"
#include "harness/supervise/look_facts.h"
#include "harness/supervise/memory_watch.h"
#include "harness/supervise/orphans.h"
#include "harness/supervise/own_process.h"
#include "harness/supervise/python_attachable.h"
#include "harness/supervise/python_channel.h"
#include "harness/supervise/python_stacks_ask_posix.h"
#include "harness/supervise/reaper.h"
#include "harness/supervise/run_loop.h"
#include "harness/supervise/sleeping_threads.h"
#include "harness/supervise/stack_order.h"
#include "harness/supervise/stack_taking.h"
#include "harness/supervise/stderr_crash_dumps.h"
#include "harness/supervise/stuck_processes.h"
#include "harness/supervise/supervisor.h"
#include "harness/supervise/tree_ownership.h"
#include "harness/supervise/wait_graph.h"
#include "harness/supervise/watchdog.h"
#include "harness/supervise/zygote.h"
#include "launch/boost_process_v1.h"
#include "launch/fdio_posix.h"
#include "launch/process_tree.h"
#include "launch/start_state_posix.h"
#include "launch/tree_activity.h"

#ifdef __APPLE__
extern char** environ;  // macOS's <unistd.h> does not declare it
#endif

namespace fc::harness {
namespace {

using launch::TreeActivity;
using std::chrono::milliseconds;

// Ending what a tree left behind: first every process of it stopped (SIGSTOP, round after round,
// until a look finds none that was not stopped already: a stopped process forks no more, so a
// chain of short-lived processes cannot keep a generation ahead), then rounds of SIGKILL (to its
// group, while its leader is held unreaped, and to every process seen) and a fresh look, until a
// look finds nothing alive; each round waits this long for what it killed to be gone (a process
// in uninterruptible sleep dies when it wakes).
constexpr int kFreezeRounds = 50;
constexpr int kKillRounds = 20;
constexpr int kKillWaitMs = 20;
// forkcheck's own process starts no child but through the supervisor: every child of ours is a
// tree's (claim_every_child).
bool g_claim_every_child = false;

using launch::detail::Fd;

// Both ends close-on-exec (launch/fdio_posix.h: pipe2 on Linux; macOS has none).
struct Pipe {
  Fd read, write;
  Pipe() {
    auto ends = launch::detail::make_pipe();
    read = std::move(ends.first);
    write = std::move(ends.second);
  }
};

// forkcheck's stdin, a terminal, relayed to a child through a pipe: the child runs in a process
// group of its own, which may not read the terminal (it would be stopped by SIGTTIN). Read only
// while forkcheck is in the terminal's foreground (else forkcheck itself would be stopped).
struct StdinRelay {
  Fd to_child;
  std::string pending;
  bool eof = false;  // the terminal's end of input (Ctrl-D): the child gets its own
  static constexpr size_t kMaxPending = 64 * 1024;
  bool wants_input() const {
    return !eof && to_child.get() >= 0 && pending.size() < kMaxPending &&
           ::tcgetpgrp(STDIN_FILENO) == ::getpgrp();
  }
};

struct Job;
using Jobs = std::list<std::unique_ptr<Job>>;

// A debugger to start for a job's stacks.
struct DebuggerWanted {
  uint64_t owner = 0;
  uint64_t gen = 0;
  size_t slot = 0;
  std::unique_ptr<LaunchSpec> spec;
};

// What the jobs of one Supervisor::run share.
struct Loop {
  Jobs running;  // the specs' jobs, and debuggers taking stacks
  std::deque<DebuggerWanted> wanted;
  Job* find(uint64_t serial);
};

class PosixControl;

struct Job : JobCore {
  using JobCore::JobCore;

  Fd out, err, chan;
  std::optional<StdinRelay> relay;
  std::unique_ptr<JobTree> tree;  // every process of it, held by handles
  StuckProcesses stuck;           // which of them can never go on
  SleepingThreads sleeping;       // which threads sleep in a wait that ends by itself
  std::unique_ptr<PosixControl> control;
  uint64_t serial = 0;  // unique in this run: how a debugger names the job it serves
  // CPU of the tree's orphans reaped since the last look, which no look saw (Reaper::Reaped),
  // and whether one was reaped at all (a process ended: the tree is doing something).
  std::uint64_t reaped_cpu_ns = 0;
  bool reaped_any = false;
  // Stacks being taken for this job; each taking has its own generation, so that a debugger of
  // an earlier one (ended early, still exiting) never answers for a later one.
  std::unique_ptr<StackTaking> taking;
  uint64_t taking_gen = 0;
  // A debugger taking the stacks of job `stacks_of` (taking `stacks_gen`, its command
  // `stacks_slot`), and the process it attaches to: ours, not reported. 0: not a debugger.
  uint64_t stacks_of = 0, stacks_gen = 0;
  size_t stacks_slot = 0;
  std::optional<ProcessHandle> target;
  bool cut_short = false;                // ended by us before it finished: its target is continued
  std::unique_ptr<LaunchSpec> own_spec;  // a debugger's command outlives the StackTaking
  // The Python bootstrap's channel (LaunchSpec::python_bootstrap), and the Python processes
  // being asked for their stacks for the taking under way (each one's debugger waits for it).
  std::unique_ptr<PythonChannel> python;
  std::map<ProcessId, PythonStacksAsk> asks;
  std::unique_ptr<MemoryWatch> memory;  // LaunchSpec::watch_memory
  // LaunchSpec::attach_pid: a process we did not start, held by this handle (not our child: it is
  // never reaped here, and nothing of it is signalled unless the spec asks for its end).
  std::optional<ProcessHandle> attached;

  bool pipes_open() const { return out.get() >= 0 || err.get() >= 0 || chan.get() >= 0; }
  bool debugger() const { return stacks_of != 0; }
};

Job* Loop::find(uint64_t serial) {
  for (auto& j : running)
    if (j->serial == serial) return j.get();
  return nullptr;
}

// Whether the job has exited by now (it is held unreaped: its status is there to take).
bool exited(Job& job, Clock::time_point now) {
  if (job.ended_at) return true;
  if (job.attached) {
    if (!job.attached->ended()) return false;
    job.r.attached->ended = true;  // its status is its parent's, not ours to read
    job.exited(now);
    return true;
  }
  Reaper& reaper = Reaper::instance();
  reaper.reap();
  if (auto status = reaper.take(job.r.pid)) {
    job.r.exit = ExitStatus::from_wait_status(*status);
    job.exited(now);
  }
  return job.ended_at.has_value();
}

// Whether a debugger of ours is running for this job now (its processes' states are ours then).
bool held_by_debugger(const Job& job, const Loop& loop) {
  if (!job.taking) return false;
  for (const auto& d : loop.running)
    if (d->stacks_of == job.serial && !d->ended_at) return true;
  return false;
}

// A look at the job's tree, fed to its watchdog.
void look(Job& j, Loop& loop, Clock::time_point now) {
  const launch::TreeLook before = j.tree->last_look();
  launch::TreeChange change = j.tree->look();
  const launch::TreeLook& after = j.tree->last_look();
  if (j.memory)
    if (auto grew = j.memory->sample(after, now); grew && j.spec->on_memory_growth)
      j.spec->on_memory_growth(*grew);
  change.cpu_ns += std::exchange(j.reaped_cpu_ns, 0);
  if (std::exchange(j.reaped_any, false)) change.membership_changed = true;
  LookFacts f;
  f.at = now;
  f.change = change;
  f.held = held_by_debugger(j, loop);
  if (!before.processes.empty()) {
    j.stuck.look(before, after, f.held);
    j.sleeping.look(before, after, f.held);
  }
  count_processes(before, after, f);
  f.stuck = j.stuck.stuck();
  f.sleeping = j.sleeping.sleeping();
  // A still process with its own alarm pending sleeps until it comes: the signal ends the wait.
  if (j.python)
    for (const auto& a : j.python->pending_alarms(now)) {
      const auto p = after.processes.find(a.pid);
      if (p == after.processes.end() || p->second.facts.zombie() || !f.asleep.count(a.pid) ||
          !signal_reaches_main_thread(a.pid, SIGALRM))
        continue;
      SleepingThread t;
      t.pid = a.pid;
      t.tid = a.pid;
      t.process = p->second.facts.name;
      t.since = a.set;
      t.ends = a.at;
      t.alarm = true;
      t.alarm_where = a.where;
      add_sleeper(f.sleeping, std::move(t));
    }
  j.watchdog->looked(f);
}

// Starts the debuggers jobs want, as many as DebuggerSlots allows (`max` trees at once).
void start_debuggers(Loop& loop, size_t max, Clock::time_point now);

// Debuggers that start now (stack_order.h) queued: those of every process not being asked when
// the taking begins (`ask_over` 0), or the one of `ask_over` once its ask is over.
void want_debuggers(Job& job, Loop& loop, ProcessId ask_over) {
  const auto& commands = job.taking->commands();
  for (size_t i = 0; i < commands.size(); ++i) {
    const ProcessId target = job.taking->target(i);
    if (!debugger_starts(target, ask_over, job.asks.count(target) > 0)) continue;
    loop.wanted.push_back(
        {job.serial, job.taking_gen, i, std::make_unique<LaunchSpec>(commands[i])});
  }
}

// `pid`'s Python threads by CPython's ident, as the taking names them.
std::map<std::uint64_t, StackTaking::PyThreadName> python_names(const Job& job, ProcessId pid) {
  std::map<std::uint64_t, StackTaking::PyThreadName> names;
  for (const auto& [ident, t] : job.python->threads_of(pid)) names[ident] = {t.native_id, t.name};
  return names;
}

// What an ask got, to the taking.
void hand_over(Job& job, ProcessId pid, const PythonStacksAsk& ask) {
  job.taking->add_python_dump(pid, dump_of_ask(ask, *job.python, pid), python_names(job, pid),
                              unread_of_ask(ask, *job.python, pid));
}

// Each Python process being asked: a fresh look, and what its ask decides done, until it waits.
void advance_asks(Job& job, Loop& loop, Clock::time_point now) {
  for (auto it = job.asks.begin(); it != job.asks.end();) {
    const ProcessId pid = it->first;
    PythonStacksAsk& ask = it->second;
    for (int acts = 0; acts < PythonStacksAsk::kActsPerRound && !ask.done(); ++acts) {
      const PythonStacksAsk::Look look = look_for_ask(pid, ask.offer(), *job.python, now);
      const PythonStacksAsk::Act act = ask.step(look);
      if (act.kind == PythonStacksAsk::Act::Kind::kNothing) break;
      const PythonStacksAsk::Sent how = send_for_ask(pid, act, look);
      if (how == PythonStacksAsk::Sent::kSent)
        job.note_look_signal(pid,
                             act.kind == PythonStacksAsk::Act::Kind::kAskMain
                                 ? "asked its main thread for every thread's stack"
                                 : "asked one of its threads for its stack",
                             now);
      ask.sent(act, how, look);
    }
    if (!ask.done()) {
      ++it;
      continue;
    }
    hand_over(job, pid, ask);
    want_debuggers(job, loop, pid);  // the process's debugger may start now
    it = job.asks.erase(it);
  }
}

// The stacks are in (or the taking was cut short: `why` says why): to the watchdog.
void deliver_stacks(Job& job, Clock::time_point now, const std::string& why) {
  for (auto& [pid, ask] : job.asks) {
    ask.stop(look_for_ask(pid, ask.offer(), *job.python, now));
    hand_over(job, pid, ask);
  }
  job.asks.clear();
  Stacks taken = job.taking->take(why);
  job.taking.reset();
  job.watchdog->stacks_in(std::move(taken), now);
  job.next_tick = now;  // what waited for the stacks is due at once
}

// forkcheck attach: the processes of the tree whose job was started with the lines of
// `forkcheck attach --env` are asked for their Python frames as exec's are, through their own
// files (python_attachable.h). Returns those found but not to be asked, each with why.
std::vector<std::pair<ProcessId, std::string>> adopt_attachable(Job& job,
                                                                const StacksRequest& request,
                                                                Clock::time_point now) {
  std::vector<std::pair<ProcessId, std::string>> not_asked;
  if (job.python) job.python->forget_adopted();
  for (const auto& [pid, attach] : request.processes) {
    std::string why;
    auto files = attachable_files(pid, PythonChannel::dump_signal(), why);
    if (!files) {
      if (!why.empty()) not_asked.emplace_back(pid, why);
      continue;
    }
    if (!job.python) job.python = PythonChannel::for_attach();
    std::vector<std::pair<int, std::string>> threads;
    for (const auto& t : files->threads) threads.emplace_back(t.tid, t.name);
    job.python->adopt(pid, files->dump_fd, threads, now);
  }
  return not_asked;
}

void freeze_and_kill(Job& job, Loop& loop);

class PosixControl : public TreeControl {
 public:
  PosixControl(Job& job, Loop& loop) : job_(job), loop_(loop) {}

  void look_now() override {
    if (!job_.tree) return;
    look(job_, loop_, Clock::now());
  }

  void take_stacks(const StacksRequest& given) override {
    ++job_.taking_gen;
    StacksRequest request = given;
    request.attached = job_.attached.has_value();
    // The Python processes whose bootstrap listens are asked first (stack_order.h).
    std::set<ProcessId> dumping;
    job_.asks.clear();
    const Clock::time_point now = Clock::now();
    std::vector<std::pair<ProcessId, std::string>> not_asked;
    if (job_.attached) not_asked = adopt_attachable(job_, request, now);
    if (job_.python) {
      for (const auto& [pid, attach] : request.processes) {
        const auto offer = job_.python->offer(pid);
        if (!offer) continue;
        job_.asks.emplace(pid,
                          PythonStacksAsk(*offer, look_for_ask(pid, *offer, *job_.python, now)));
        dumping.insert(pid);
      }
    }
    job_.taking = std::make_unique<StackTaking>(request, dumping);
    for (const auto& [pid, why] : not_asked) job_.taking->python_not_asked(pid, why);
    want_debuggers(job_, loop_, 0);
    advance_asks(job_, loop_, now);
    if (job_.taking->complete()) deliver_stacks(job_, Clock::now(), "");
  }

  void stop_stacks(const std::string& why) override {
    if (!job_.taking) return;
    // Its debuggers are ended at once; each one's process is continued when it is reaped.
    for (auto& d : loop_.running)
      if (d->stacks_of == job_.serial && !d->ended_at && !d->cut_short) {
        d->cut_short = true;
        d->tree->signal_all(SIGKILL);
      }
    deliver_stacks(job_, Clock::now(), why);
  }

  void describe(TreeFacts& t) override {
    std::vector<ThreadStack> threads;
    for (const auto& [pid, p] : job_.tree->last_look().processes) {
      if (p.facts.zombie()) continue;
      ++t.processes;
      t.threads += p.threads.size();
      // Under a debugger of ours a thread waits in ptrace_stop: what it waited in before counts.
      const std::vector<ThreadStack>* before = nullptr;
      if (job_.taking) {
        auto it = job_.taking->before_attach().find(pid);
        if (it != job_.taking->before_attach().end()) before = &it->second;
      }
      if (before)
        threads.insert(threads.end(), before->begin(), before->end());
      else
        for (auto& th : proc_threads(pid)) threads.push_back(std::move(th));
    }
    t.waiting_in = waiting_in(threads);
  }

  WaitGraphFacts wait_graph() override {
    std::vector<int> pids;
    std::map<int, std::uint64_t> started;
    for (const auto& [pid, p] : job_.tree->last_look().processes)
      if (!p.facts.zombie()) {
        pids.push_back(pid);
        started[pid] = p.facts.start_time;
      }
    return read_wait_graph(job_.r.pid, pids, kHolderScanBudget, started);
  }

  Sent ask_to_end() override {
    if (leaves_running()) {
      leave_running();
      return Sent::kNothing;
    }
    // An exit that comes just before the signal is the child's own: looked at last, so that
    // "SIGTERM ended it" is never said of a child that had already exited. What is left of its
    // tree gets SIGTERM and its grace too.
    const bool alive = !exited(job_, Clock::now());
    job_.tree->signal_all(SIGTERM);
    job_.tree->signal_all(SIGCONT);  // a stopped process cannot act on SIGTERM
    return alive ? Sent::kRequest : Sent::kNothing;
  }

  bool kill_all() override {
    const bool alive = !exited(job_, Clock::now());
    if (leaves_running()) {
      leave_running();
      return false;
    }
    freeze_and_kill(job_, loop_);
    return alive;
  }

 private:
  // forkcheck attach: a process it did not start is left as it is, unless ends_attached_tree.
  bool leaves_running() const { return job_.attached && !ends_attached_tree(*job_.spec, job_.r); }
  // The watch ends here, the tree left exactly as it was.
  void leave_running() {
    if (job_.ended_at) return;
    const Clock::time_point now = Clock::now();
    job_.r.attached->left_running = true;
    job_.ended_at = now;
  }

  Job& job_;
  Loop& loop_;
};

std::string resolve_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const std::string p = find_in_path(name);
  return p.empty() ? name : p;
}

// A started (or attached) job's watching from now on: its channel reader, its watchdog, and the
// first look at its tree.
void start_watching(Job& job, Loop& loop) {
  job.control = std::make_unique<PosixControl>(job, loop);
  job.watch(*job.control);
  look(job, loop, job.start);
}

std::unique_ptr<Job> start_job_unguarded(size_t index, const LaunchSpec& spec, Loop& loop) {
  auto job = std::make_unique<Job>(index, spec);
  if (spec.argv.empty()) {
    job->refuse("no command given");
    return job;
  }
  static uint64_t serial = 0;
  job->serial = ++serial;
  Pipe out, err, chan;
  const int out_w = out.write.get(), err_w = err.write.get(), chan_w = chan.write.get();
  const bool with_channel = spec.channel;
  // stdin: forkcheck's own (a terminal through a relay pipe), or /dev/null.
  Fd stdin_for_child;
  if (spec.stdin_passthrough && ::isatty(STDIN_FILENO)) {
    Pipe relay;
    launch::detail::set_nonblocking(relay.write.get());
    stdin_for_child = std::move(relay.read);
    job->relay.emplace();
    job->relay->to_child = std::move(relay.write);
  } else if (!spec.stdin_passthrough) {
    stdin_for_child = Fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  }
  const int stdin_fd = stdin_for_child.get();  // -1: the child inherits forkcheck's stdin as it is

  // The child's environment, built here rather than with bp::environment: Boost 1.74's keyed
  // lookup reads past the end of shorter entries (ASan reports it).
  job->token = run_token() + "-" + std::to_string(job->serial);
  std::vector<std::pair<std::string, std::string>> overrides = spec.env;
  overrides.emplace_back(kRunTokenVar, job->token);
  // Yama ptrace_scope=1: the debugger that takes stacks is our child, a sibling of the tree, so
  // the tree names us as its ptracer (here before exec; the launch library in its workers).
  const pid_t self = ::getpid();
  overrides.emplace_back("FORKCHECK_PTRACER", std::to_string(self));
  if (with_channel) overrides.emplace_back("FORKCHECK_CHANNEL_FD", std::to_string(chan_w));
  if (!spec.python_bootstrap.empty()) {
    std::string why;
    job->python = PythonChannel::open(job->token, why);
    if (job->python) {
      for (auto& v :
           python_bootstrap_env(spec, job->python->address(), PythonChannel::dump_signal(),
                                PythonChannel::stacks_signal(), std::getenv("PYTHONPATH")))
        overrides.push_back(std::move(v));
    } else {
      job->r.python_note =
          "the Python bootstrap was not offered: its channel could not listen (" + why + ")";
    }
  }
  std::vector<std::string> inherited;
  for (char** e = ::environ; e && *e; ++e) inherited.emplace_back(*e);
  std::vector<std::string> env_strings = child_environment(inherited, overrides);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  char** const envp_data = envp.data();
  // The signal dispositions and descriptor limit forkcheck inherited, given back to the child.
  const launch::detail::ChildStart child_start = inherited_child_start();

  const std::string program = resolve_program(spec.argv[0]);
  std::vector<std::string> args(spec.argv.begin() + 1, spec.argv.end());
  job->start = Clock::now();
  // Before the child starts: the OOM counters and the kernel's log are read from here on.
  if (spec.watch_memory) job->memory = std::make_unique<MemoryWatch>(job->start);
  if (spec.zygote && spec.env.empty() && !spec.stdin_passthrough) {
    std::string why;
    if (auto pid = spec.zygote->start(args, out_w, err_w, with_channel ? chan_w : -1,
                                      {{kRunTokenVar, job->token}}, why)) {
      job->r.pid = *pid;
      job->r.started_via = "zygote";
    } else {
      job->r.start_note = "not forked from the zygote (" + why + "): exec'd instead";
    }
  }
  if (job->r.started_via.empty()) {
    try {
      // Runs in the child between fork and exec (the harness is single-threaded, and everything
      // here is async-signal-safe): its own group, its stdio, an empty signal mask and the
      // dispositions forkcheck inherited (not its SIGPIPE, which it ignores), the descriptor
      // limit it inherited (not its raised one), and no descriptor but stdio and the channel.
      auto setup = [=](auto& exec) {
        exec.env = envp_data;  // prepared before the fork: nothing is allocated here
        ::setpgid(0, 0);
#ifdef __linux__
        ::prctl(PR_SET_PTRACER, static_cast<unsigned long>(self), 0UL, 0UL, 0UL);  // kept by exec
#endif
        if (stdin_fd >= 0) ::dup2(stdin_fd, STDIN_FILENO);
        ::dup2(out_w, STDOUT_FILENO);
        ::dup2(err_w, STDERR_FILENO);
        child_start.apply(with_channel ? chan_w : -1);
        if (with_channel) ::fcntl(chan_w, F_SETFD, 0);  // the one fd the child inherits
      };
      bp::child c(bp::exe = program, bp::args = args, bp::extend::on_exec_setup = setup);
      job->r.pid = c.id();
      // We reap with the native status ourselves: bp's child would waitpid behind our back.
      c.detach();
      job->r.started_via = "exec";
    } catch (const std::exception& e) {
      job->cannot_start(e.what());
      return job;
    }
  }
  ::setpgid(job->r.pid, job->r.pid);  // also here, so the group exists before we signal it
  // Held unreaped until what it leaves behind is ended: its pid, and its group's id, stay ours.
  Reaper::instance().hold(job->r.pid);
  // Our child, unreaped (only the Reaper reaps, and only in the loop): its start time read now
  // names it, also if it has already exited.
  auto facts = launch::process_facts(job->r.pid);
  const std::uint64_t start_time = facts ? facts->start_time : 0;
  guardian_track(job->r.pid, start_time, /*group_leader=*/true);
  job->tree = std::make_unique<JobTree>(job->r.pid, start_time, job->token);
  job->r.started = true;
  job->out = std::move(out.read);
  job->err = std::move(err.read);
  if (with_channel) job->chan = std::move(chan.read);
  start_watching(*job, loop);
  return job;
}

// forkcheck attach: a job for a running process forkcheck did not start, watched as a child is
// (its tree looked at, its stalls, stuck processes, waits, memory and stacks), with nothing to
// read from it but /proc and its stacks.
std::unique_ptr<Job> attach_job(size_t index, const LaunchSpec& spec, Loop& loop) {
  auto job = std::make_unique<Job>(index, spec);
  static uint64_t serial = 1u << 31;  // apart from start_job's
  job->serial = ++serial;
  const ProcessId pid = spec.attach_pid;
  job->r.pid = pid;
  const auto facts = launch::process_facts(pid);
  // The process the command checked, not one that got its pid since.
  if (!facts || facts->zombie() ||
      (spec.attach_start_time != 0 && facts->start_time != spec.attach_start_time)) {
    job->refuse("no running process " + std::to_string(pid) + " (it ended)");
    return job;
  }
  job->attached = ProcessHandle::open(pid, facts->start_time);
  if (!job->attached) {
    job->refuse("process " + std::to_string(pid) + " ended as forkcheck attached");
    return job;
  }
  job->start = Clock::now();
  AttachedWatch a;
  a.parent_pid = facts->ppid;
  job->r.attached = a;
  job->r.started_via = "attach";
  job->r.python_note =
      "not started by forkcheck: its Python processes have no bootstrap to give their frames, "
      "names and exceptions (their frames come from gdb and CPython's gdb extension where the "
      "interpreter has it); forkcheck exec gives them all";
  if (spec.watch_memory) job->memory = std::make_unique<MemoryWatch>(job->start);
  job->tree = std::make_unique<JobTree>(pid, facts->start_time, "", /*attached=*/true);
  job->r.started = true;
  start_watching(*job, loop);
  return job;
}

// Starts the child; on failure (no program, no pipes: EMFILE) returns the job with
// r.started == false and the reason.
std::unique_ptr<Job> start_job(size_t index, const LaunchSpec& spec, Loop& loop) {
  try {
    if (spec.attach_pid > 0) return attach_job(index, spec, loop);
    return start_job_unguarded(index, spec, loop);
  } catch (const std::exception& e) {
    auto job = std::make_unique<Job>(index, spec);
    job->cannot_start(e.what());
    return job;
  }
}

void start_debuggers(Loop& loop, size_t max, Clock::time_point now) {
  DebuggerSlots slots(max, DebuggerSlots::per_tree_default());
  for (const auto& j : loop.running)
    if (j->debugger() && !j->ended_at) slots.running(j->stacks_of);
  for (auto it = loop.wanted.begin(); it != loop.wanted.end();) {
    Job* owner = loop.find(it->owner);
    if (!owner || !owner->taking || owner->taking_gen != it->gen) {  // ended meanwhile
      it = loop.wanted.erase(it);
      continue;
    }
    if (!slots.may_start(it->owner)) {
      ++it;
      continue;
    }
    DebuggerWanted d = std::move(*it);
    it = loop.wanted.erase(it);
    const ProcessId target = owner->taking->target(d.slot);
    // A process that ended meanwhile (its ask saw it go) gets no debugger: nothing to look at,
    // and an attach to what is left of it would be the last thing forkcheck did to it.
    if (auto f = launch::process_facts(target); !f || f->zombie()) {
      ChildResult gone;
      gone.start_error = "it had ended";
      owner->taking->add_result(d.slot, gone);
      if (owner->taking->complete()) deliver_stacks(*owner, now, "");
      continue;
    }
    auto debugger = start_job(owner->index, *d.spec, loop);
    debugger->own_spec = std::move(d.spec);
    if (!debugger->r.started) {
      owner->taking->add_result(d.slot, debugger->r);
      if (owner->taking->complete()) deliver_stacks(*owner, now, "");
      continue;
    }
    if (!debugger->own_spec->argv.empty()) {
      const std::string& path = debugger->own_spec->argv[0];
      owner->note_look_signal(target, "attached " + path.substr(path.rfind('/') + 1) + " to it",
                              now);
    }
    debugger->stacks_of = d.owner;
    debugger->stacks_gen = d.gen;
    debugger->stacks_slot = d.slot;
    if (auto f = launch::process_facts(target))
      debugger->target = ProcessHandle::open(target, f->start_time);
    loop.running.push_back(std::move(debugger));
    slots.running(d.owner);
  }
}

// A Pool of a module without a __main__ guard starts workers that fail at start for ever: how
// many have, to the watchdog (it ends the run once enough have).
void note_start_failures(Job& j) {
  if (j.python && j.watchdog)
    j.watchdog->failed_at_start(j.python->processes_that_raised(kStartFailure));
}

void read_into(Fd& fd, Job& job, int which, Clock::time_point now) {
  char buf[65536];
  ssize_t n = ::read(fd.get(), buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    fd.reset();
    return;
  }
  job.output(which, buf, static_cast<size_t>(n), now);
}

// Moves what the terminal gave into the child's pipe, as much as it takes now.
void relay_stdin(StdinRelay& relay, bool readable) {
  if (readable && relay.wants_input()) {
    char buf[4096];
    const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n > 0)
      relay.pending.append(buf, static_cast<size_t>(n));
    else if (n == 0 || (errno != EINTR && errno != EAGAIN))
      relay.eof = true;
  }
  while (!relay.pending.empty() && relay.to_child.get() >= 0) {
    const ssize_t n = ::write(relay.to_child.get(), relay.pending.data(), relay.pending.size());
    if (n <= 0) {
      if (n < 0 && errno == EPIPE) relay.to_child.reset();  // the child closed its stdin
      break;
    }
    relay.pending.erase(0, static_cast<size_t>(n));
  }
  if (relay.eof && relay.pending.empty()) relay.to_child.reset();
}

// A process of ours that no tree claimed, held until the run ends.
using Strays = std::map<std::pair<ProcessId, std::uint64_t>, ProcessHandle>;

// Orphans the kernel re-parented to us, each where orphans.h says it goes.
void adopt_orphans(Loop& loop, Strays& strays) {
  std::set<ProcessId> known;
  size_t trees = 0;
  Job* only = nullptr;
  for (const auto& j : loop.running) {
    if (!j->r.started) continue;
    known.insert(j->r.pid);
    if (!j->debugger() && !j->attached) {  // an attached tree's orphans never come to us
      ++trees;
      only = j.get();
    }
  }
  for (auto it = strays.begin(); it != strays.end();)  // gone: its pid may be reused
    it = it->second.ended() ? strays.erase(it) : std::next(it);
  const pid_t self = ::getpid(), our_group = ::getpgrp();
  for (ProcessId p : launch::child_processes(self)) {
    if (known.count(p) || is_helper_process(p)) continue;
    auto f = launch::process_facts(p);
    if (!f || f->zombie() || f->ppid != self || strays.count({p, f->start_time})) continue;
    Job* owner = nullptr;
    for (auto& j : loop.running)
      if (j->tree && !j->debugger() && j->tree->claims(*f)) owner = j.get();
    switch (where_orphan_goes(owner != nullptr, f->pgid == our_group, g_claim_every_child, trees,
                              [&] { return started_with_env(p, kRunTokenVar, run_token()); })) {
      case OrphanGoesTo::kNotOurs:
        break;
      case OrphanGoesTo::kOnlyTree:
        only->tree->adopt(*f);
        break;
      case OrphanGoesTo::kClaimingTree:
        owner->tree->adopt(*f);
        break;
      case OrphanGoesTo::kStray:
        if (auto h = ProcessHandle::open(p, f->start_time))
          strays.emplace(std::make_pair(p, f->start_time), std::move(*h));
        break;
    }
  }
}

// Orphans reaped since the last look: their CPU, less what a look already counted, to the tree
// that claims them (the only tree, when none does), and their end is an event of that tree.
void credit_reaped(Loop& loop) {
  auto reaped = Reaper::instance().take_reaped();
  if (reaped.empty()) return;
  std::vector<Job*> trees;
  for (auto& j : loop.running)
    if (j->tree && !j->debugger() && !j->ended_at && !j->attached) trees.push_back(j.get());
  for (const auto& rp : reaped) {
    Job* owner = nullptr;
    std::uint64_t seen_ns = 0;
    for (Job* j : trees) {
      const auto& procs = j->tree->last_look().processes;
      auto it = procs.find(rp.pid);
      if (it != procs.end() && it->second.facts.start_time == rp.start_time) {
        owner = j;
        for (const auto& [tid, t] : it->second.threads) seen_ns += t.cpu_ns;
      } else if (!owner && j->tree->has_seen(rp.pid, rp.start_time)) {
        owner = j;
      }
    }
    if (!owner && trees.size() == 1) owner = trees.front();
    if (!owner) continue;
    owner->reaped_any = true;
    owner->reaped_cpu_ns += rp.cpu_ns > seen_ns ? rp.cpu_ns - seen_ns : 0;
  }
}

// Every process of the tree stopped, round after round until a look finds nothing new, then
// killed (see kFreezeRounds).
void freeze_and_kill(Job& job, Loop& loop) {
  Strays none;
  std::set<ProcessId> stopped;
  for (int round = 0; round < kFreezeRounds; ++round) {
    adopt_orphans(loop, none);
    bool fresh = false;
    for (ProcessId p : job.tree->leftovers()) fresh = stopped.insert(p).second || fresh;
    if (!job.ended_at && !job.attached)
      for (ProcessId p : group_members(job.r.pid)) fresh = stopped.insert(p).second || fresh;
    job.tree->signal_all(SIGSTOP);
    if (!fresh && round > 0) break;
  }
  job.tree->signal_all(SIGKILL);
}

void finish(Loop& loop, Strays& strays, Job& job) {
  // Whatever of its tree outlived the child is ended now, in its process group or out of it (a
  // grandchild that called setsid is found through child links, or among the orphans re-parented
  // to us, or by the job's token): first frozen, so that a fork chain cannot keep ahead, then
  // killed in rounds until a fresh look finds nothing: nothing is left behind, and no stranger is
  // touched. The child is still held unreaped, so its group's id is still ours: the group is
  // signalled as a whole each round, which reaches at once what its members fork meanwhile.
  // A tree that left nothing (the common end: a look through child links from it and from the
  // orphans re-parented to us finds nothing alive) costs that look and no scan of /proc for its
  // token or its group: with forkcheck a child subreaper, whatever descends from the child is
  // reached so. Anything alive, and the scans make sure.
  std::set<ProcessId> killed;
  adopt_orphans(loop, strays);
  job.tree->look();
  if (left_as_it_is(job.attached.has_value(), job.r)) {
    // What of its tree was alive then is said.
    auto& alive = job.r.attached->running_at_end;
    if (!job.attached->ended()) alive.push_back(job.r.pid);
    for (ProcessId p : job.tree->leftovers()) alive.push_back(p);
    job.record_end();
    if (job.memory) job.r.memory = job.memory->record();
    return;
  }
  bool anything_left = false;
  for (const auto& [pid, p] : job.tree->last_look().processes)
    anything_left = anything_left || (pid != job.r.pid && !p.facts.zombie());
  if (anything_left) {
    for (ProcessId p : job.tree->leftovers()) killed.insert(p);
    if (!job.attached)
      for (ProcessId p : group_members(job.r.pid)) killed.insert(p);
  }
  if (!killed.empty()) {
    freeze_and_kill(job, loop);
    job.tree->wait_ended(kKillWaitMs);
    for (int round = 0; round < kKillRounds; ++round) {
      adopt_orphans(loop, strays);
      const auto left = job.tree->leftovers();
      if (left.empty()) break;
      killed.insert(left.begin(), left.end());
      job.tree->signal_all(SIGKILL);
      job.tree->wait_ended(kKillWaitMs);
    }
    // Said apart: what SIGKILL has not ended yet (a process in uninterruptible sleep), or what
    // kept ahead of every look.
    for (ProcessId p : job.tree->leftovers())
      if (p != job.r.pid) job.r.leftovers_surviving.push_back(p);
  }
  job.r.leftovers_killed.assign(killed.begin(), killed.end());
  const auto& strangers = job.tree->group_strangers();
  job.r.group_strangers.assign(strangers.begin(), strangers.end());
  if (!job.attached) Reaper::instance().release(job.r.pid);
  job.tree->root_reaped();
  job.out.reset();
  job.err.reset();
  job.chan.reset();
  job.relay.reset();
  job.record_end();
  if (job.python) {
    // What is still in the pipes of the Python side (a crash's dump written just before the end).
    for (int round = 0; round < 3; ++round) {
      job.python->accept_ready(Clock::now());
      job.python->drain_all(Clock::now());
    }
    job.r.python = job.python->facts();
    job.python.reset();
    // A crash dump the program's own faulthandler wrote (pytest arms one by default).
    adopt_crash_dumps_from_stderr(job.r.python, job.r.err.text());
  }
  if (job.memory) job.r.memory = job.memory->record();
}

// Ctrl-Z: every tree stopped with forkcheck, and continued with it; the time they were stopped
// does not count against any deadline.
void pause_all(Loop& loop) {
  const Clock::time_point from = Clock::now();
  const auto stops = [&](const Job& j) {  // tree_ownership.h
    const Job* owner = j.debugger() ? loop.find(j.stacks_of) : nullptr;
    return stops_with_forkcheck(j.attached.has_value(), owner && owner->attached);
  };
  for (auto& j : loop.running)
    if (j->tree && !j->ended_at && stops(*j)) j->tree->signal_all(SIGSTOP);
  std::fflush(nullptr);
  stop_now();
  const Clock::time_point to = Clock::now();
  for (auto& j : loop.running) {
    if (!j->tree || j->ended_at) continue;
    if (stops(*j)) j->tree->signal_all(SIGCONT);
    j->stuck.clear();
    j->sleeping.clear();
    j->watchdog->paused(from, to, *j->channel);
  }
}

// A debugger ended: its result to the taking it served, if that is still going on; its target
// continued if the debugger was cut short (an attach leaves a stop behind when its debugger dies).
void debugger_ended(Loop& loop, Job& d, ChildResult& r, Clock::time_point now) {
  if ((d.cut_short || time_was_called(r)) && d.target) d.target->signal(SIGCONT);
  Job* owner = loop.find(d.stacks_of);
  if (owner && owner->taking && owner->taking_gen == d.stacks_gen) {
    owner->taking->add_result(d.stacks_slot, r);
    if (owner->taking->complete()) deliver_stacks(*owner, now, "");
  }
}

// What the loop (run_loop.h) asks of POSIX: poll() over every job's pipes, the reaper's wake and
// the Python channels; exits from the reaper (held unreaped until finish()); orphans adopted by
// their trees before the looks; debuggers of ours started, and ended, for the stacks.
class PosixOs {
 public:
  // The reaper first, before any child starts: it makes this process the subreaper that a
  // tree's orphans come to (an orphan made before it would go to init, unseen).
  PosixOs(Loop& loop, size_t max_jobs)
      : reaper_(Reaper::instance()), loop_(loop), max_jobs_(max_jobs) {}

  bool ours(const Job& j) const { return !j.debugger(); }
  void round_begins(Clock::time_point) {
    if (stop_requested()) pause_all(loop_);
    start_debuggers(loop_, max_jobs_, Clock::now());  // after a Ctrl-Z pause: now, not before it
  }
  void interrupted() { loop_.wanted.clear(); }
  std::unique_ptr<Job> start(size_t index, const LaunchSpec& spec) {
    return start_job(index, spec, loop_);
  }
  Clock::time_point wake_for(const Job& j, Clock::time_point now) const {
    return j.python && !j.asks.empty() ? now + PythonStacksAsk::kLookEvery
                                       : Clock::time_point::max();
  }

  Clock::time_point wait_and_read(const Jobs& running, Clock::time_point wake) {
    Reaper& reaper = reaper_;
    std::vector<pollfd> fds;
    // -1: the reaper; 0-2: stdout, stderr, channel; 3: the terminal; 4: the relay pipe; 5: the
    // Python channel's listening socket; 6: one of its connections.
    std::vector<std::pair<Job*, int>> owners;
    fds.push_back({reaper.wake_fd(), POLLIN, 0});
    owners.emplace_back(nullptr, -1);
    for (const auto& j : running) {
      Fd* three[] = {&j->out, &j->err, &j->chan};
      for (int k = 0; k < 3; ++k)
        if (three[k]->get() >= 0) {
          fds.push_back({three[k]->get(), POLLIN, 0});
          owners.emplace_back(j.get(), k);
        }
      if (j->python) {
        fds.push_back({j->python->listen_fd(), POLLIN, 0});
        owners.emplace_back(j.get(), 5);
        for (int fd : j->python->connection_fds()) {
          fds.push_back({fd, POLLIN, 0});
          owners.emplace_back(j.get(), 6);
        }
      }
      if (j->relay) {
        if (j->relay->wants_input()) {
          fds.push_back({STDIN_FILENO, POLLIN, 0});
          owners.emplace_back(j.get(), 3);
        }
        if (!j->relay->pending.empty() && j->relay->to_child.get() >= 0) {
          fds.push_back({j->relay->to_child.get(), POLLOUT, 0});
          owners.emplace_back(j.get(), 4);
        }
      }
    }
    auto wait_ms = std::chrono::duration_cast<milliseconds>(wake - Clock::now()).count();
    int rc = ::poll(fds.data(), fds.size(),
                    static_cast<int>(std::clamp<long long>(wait_ms + 1, 0, 1000)));
    const Clock::time_point now = Clock::now();
    if (rc > 0) {
      for (size_t k = 1; k < fds.size(); ++k) {
        if (!(fds[k].revents & (POLLIN | POLLOUT | POLLHUP | POLLERR))) continue;
        Job& j = *owners[k].first;
        const int which = owners[k].second;
        if (which == 5 || which == 6) {
          if (!j.python) continue;
          if (which == 5)
            j.python->accept_ready(now);
          else
            j.python->read_ready(fds[k].fd, now);
          note_start_failures(j);
          continue;
        }
        if (which >= 3) {
          if (j.relay) relay_stdin(*j.relay, which == 3);
          continue;
        }
        Fd* three[] = {&j.out, &j.err, &j.chan};
        read_into(*three[which], j, which, now);
      }
    }
    reaper.reap();
    credit_reaped(loop_);
    return now;
  }

  void note_exit(Job& j, Clock::time_point now) {
    if (j.attached) {
      exited(j, now);
      return;
    }
    if (auto status = reaper_.take(j.r.pid)) {  // held unreaped until finish()
      j.r.exit = ExitStatus::from_wait_status(*status);
      j.exited(now);
    }
  }
  // The trees, every kLookEvery: orphans to their trees first, then each tree's activity.
  void before_looks(Clock::time_point now) {
    if (now < next_adoption_) return;
    adopt_orphans(loop_, strays_);
    next_adoption_ = now + TreeActivity::kLookEvery;
  }
  void look(Job& j, Clock::time_point now) { harness::look(j, loop_, now); }
  void after_looks(Clock::time_point now) {
    for (auto& j : loop_.running)
      if (j->taking && !j->asks.empty()) {
        advance_asks(*j, loop_, now);
        if (j->taking->complete()) deliver_stacks(*j, now, "");
      }
  }
  bool may_finish(const Job& j) const { return !j.taking; }
  void finish(Job& j, Clock::time_point) { harness::finish(loop_, strays_, j); }
  void not_ours_ended(Job& d, Clock::time_point now) { debugger_ended(loop_, d, d.r, now); }
  // Strays: SIGKILL through their handles, then reaped (they are our children).
  void loop_ends() {
    for (auto& [key, h] : strays_) h.signal(SIGKILL);
    for (auto& [key, h] : strays_)
      for (int i = 0; i < 100 && !h.ended(); ++i) ::usleep(2000);
    reaper_.reap();
  }

 private:
  Reaper& reaper_;
  Loop& loop_;
  size_t max_jobs_;
  Strays strays_;  // orphans no tree claimed
  Clock::time_point next_adoption_ = Clock::now();
};

}  // namespace

void Supervisor::run(const std::vector<LaunchSpec>& specs, int jobs, const Done& done) {
  Loop loop;
  PosixOs os(loop, static_cast<size_t>(std::max(1, jobs)));
  run_loop(specs, jobs, done, loop.running, os);
}

void claim_every_child() { g_claim_every_child = true; }

}  // namespace fc::harness
