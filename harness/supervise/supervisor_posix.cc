#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "harness/platform/process_handle.h"
#include "harness/platform/process_info.h"
#include "harness/platform/zygote.h"
#include "harness/stacks/stack_taking.h"
#include "harness/supervise/child_start_posix.h"
#include "harness/supervise/channel_reader.h"
#include "harness/supervise/guardian.h"
#include "harness/supervise/interrupt.h"
#include "harness/supervise/own_process.h"
#include "harness/supervise/job_tree.h"
#include "harness/supervise/reaper.h"
#include "harness/supervise/step_watch.h"
#include "harness/supervise/supervisor.h"
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
using std::chrono::duration;
using std::chrono::milliseconds;

// After the child itself ended, how long its descendants may keep the output pipes open.
constexpr duration<double> kLinger{1.0};
// Ending what a tree left behind: rounds of SIGKILL (to its group, while its leader is held
// unreaped, and to every process seen) and a fresh look, until a look finds nothing alive; each
// round waits this long for what it killed to be gone (a process in uninterruptible sleep dies
// when it wakes).
constexpr int kKillRounds = 20;
// Stacks a stall began taking go on at most this long once time is called on the tree.
constexpr double kStacksAfterCallS = 10;
constexpr int kKillWaitMs = 20;
// Debuggers of one tree running at once: a tree of hundreds of processes must not start hundreds
// of debuggers (descriptors, memory: gdb takes hundreds of MiB on a libtorch process).
const size_t kDebuggersPerTree = std::max(2u, std::thread::hardware_concurrency());
// forkcheck's own process starts no child but through the supervisor: every child of ours is a
// tree's (claim_every_child).
bool g_claim_every_child = false;

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(duration<double>(s));
}

double secs(Clock::duration d) { return duration<double>(d).count(); }

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
  Fd& operator=(Fd&& o) noexcept {
    reset();
    fd = o.fd;
    o.fd = -1;
    return *this;
  }
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

// Both ends close-on-exec (launch/fdio_posix.h: pipe2 on Linux; macOS has none).
struct Pipe {
  Fd read, write;
  Pipe() {
    auto ends = launch::detail::make_pipe();
    read = Fd(ends.first.release());
    write = Fd(ends.second.release());
  }
};

struct Job {
  size_t index = 0;
  std::string token;  // FORKCHECK_RUN of this job's tree: finds its processes wherever they went
  const LaunchSpec* spec = nullptr;
  ChildResult r;
  Fd out, err, chan;
  Clock::time_point start, deadline, term_at;
  std::optional<Clock::time_point> ended_at;   // the child itself was reaped
  std::optional<Clock::time_point> called_at;  // time was called: the deadline, or a stall
  bool terminating = false;
  std::unique_ptr<ChannelReader> channel;
  std::unique_ptr<JobTree> tree;  // every process of it, held by handles
  TreeActivity activity;          // whether that tree is working or blocked
  uint64_t serial = 0;  // unique in this run: how a debugger names the job it serves
  // Stacks being taken (after time was called): the job is ended once they are, or once their
  // budget is spent.
  std::unique_ptr<StackTaking> taking;
  Clock::time_point stacks_until;
  // A debugger taking the stacks of job `stacks_of` (its command `stacks_slot`): ours, not
  // reported. 0: not a debugger.
  uint64_t stacks_of = 0;
  size_t stacks_slot = 0;
  std::unique_ptr<LaunchSpec> own_spec;  // a debugger's command outlives the StackTaking
  // Live watching (LaunchSpec::note_stalls): the stall seen, whether its stacks are being taken
  // (the tree left running), and what the previous look measured (for on_look's CPU share).
  bool stalled = false, stall_taking = false;
  Clock::time_point stall_stacks_at;  // when the stall's stack-taking began
  // Each StackTaking of this job has its own generation: a debugger of an earlier one (ended by
  // its budget, still exiting) never answers for a later one.
  uint64_t taking_gen = 0, stacks_gen = 0;
  std::uint64_t looked_cpu_ns = 0;
  Clock::time_point looked_at;

  bool pipes_open() const { return out.fd >= 0 || err.fd >= 0 || chan.fd >= 0; }
};

using Jobs = std::list<std::unique_ptr<Job>>;

// A debugger to start for a job whose time was called.
struct DebuggerWanted {
  uint64_t owner = 0;
  uint64_t gen = 0;
  size_t slot = 0;
  std::unique_ptr<LaunchSpec> spec;
};
using DebuggersWanted = std::deque<DebuggerWanted>;

// Whether it needs a CPU now: not while parked in a step with its whole tree quiet, not while its
// stacks are taken or it ends; debuggers are counted apart.
bool needs_cpu(const Job& j) {
  if (j.ended_at || j.terminating || j.taking || j.stacks_of) return false;
  return !StepWatch::parked(*j.channel, j.activity);
}

std::string resolve_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  auto p = bp::search_path(name);
  return p.empty() ? name : p.string();
}

// A look at the job's tree, fed to its activity.
void look(Job& j, Clock::time_point now) {
  const launch::TreeChange change = j.tree->look();
  if (!j.activity.started()) j.activity.start(now);
  else j.activity.look(now, change.cpu_ns, change.membership_changed);
  if (!j.spec->on_look) return;
  LiveStatus s;
  s.elapsed_s = secs(now - j.start);
  for (const auto& [pid, p] : j.tree->last_look().processes) s.processes += p.facts.zombie() ? 0 : 1;
  const std::uint64_t cpu = j.activity.cpu_total_ns();
  if (now > j.looked_at && j.looked_cpu_ns > 0)
    s.cpu_share = static_cast<double>(cpu - j.looked_cpu_ns) / 1e9 / secs(now - j.looked_at);
  j.looked_cpu_ns = cpu;
  j.looked_at = now;
  s.still_s = secs(j.activity.still_for());
  j.spec->on_look(s);
}

std::unique_ptr<Job> start_job_unguarded(size_t index, const LaunchSpec& spec) {
  auto job = std::make_unique<Job>();
  job->index = index;
  job->spec = &spec;
  job->r.out = Capture(spec.capture_cap);
  job->r.err = Capture(spec.capture_cap);
  job->r.timeout_s = spec.timeout_s;
  if (spec.argv.empty()) {
    job->r.start_error = "no command given";
    return job;
  }
  static uint64_t serial = 0;
  job->serial = ++serial;
  Pipe out, err, chan;
  const int out_w = out.write.fd, err_w = err.write.fd, chan_w = chan.write.fd;
  const bool with_channel = spec.channel;

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
  std::vector<std::string> env_strings;
  for (char** e = ::environ; e && *e; ++e) {
    std::string entry = *e;
    const std::string key = entry.substr(0, entry.find('='));
    if (key == "FORKCHECK_CHANNEL_FD") continue;
    bool replaced = false;
    for (const auto& o : overrides) replaced = replaced || o.first == key;
    if (!replaced) env_strings.push_back(std::move(entry));
  }
  for (const auto& [k, v] : overrides) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  char** const envp_data = envp.data();
  // The signal dispositions and descriptor limit forkcheck inherited, given back to the child.
  const launch::detail::ChildStart child_start = inherited_child_start();

  const std::string program = resolve_program(spec.argv[0]);
  std::vector<std::string> args(spec.argv.begin() + 1, spec.argv.end());
  job->start = Clock::now();
  if (spec.zygote && spec.env.empty()) {
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
        ::dup2(out_w, STDOUT_FILENO);
        ::dup2(err_w, STDERR_FILENO);
        child_start.apply(with_channel ? chan_w : -1);
        if (with_channel) ::fcntl(chan_w, F_SETFD, 0);  // the one fd the child inherits
      };
      bp::child c(bp::exe = program, bp::args = args, bp::std_in < bp::null,
                  bp::extend::on_exec_setup = setup);
      job->r.pid = c.id();
      // We reap with the native status ourselves: bp's child would waitpid behind our back.
      c.detach();
      job->r.started_via = "exec";
    } catch (const std::exception& e) {
      job->r.start_error = "cannot start '" + spec.argv[0] + "': " + e.what();
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
  job->deadline = job->start + seconds(spec.timeout_s);
  job->out = std::move(out.read);
  job->err = std::move(err.read);
  if (with_channel) job->chan = std::move(chan.read);
  job->channel = std::make_unique<ChannelReader>(job->start);
  look(*job, job->start);
  return job;
}

// Starts the child; on failure (no program, no pipes: EMFILE) returns the job with
// r.started == false and the reason.
std::unique_ptr<Job> start_job(size_t index, const LaunchSpec& spec) {
  try {
    return start_job_unguarded(index, spec);
  } catch (const std::exception& e) {
    auto job = std::make_unique<Job>();
    job->index = index;
    job->spec = &spec;
    job->r.start_error =
        "cannot start '" + (spec.argv.empty() ? std::string() : spec.argv[0]) + "': " + e.what();
    return job;
  }
}

// What the tree was doing, as of the last look: the facts a report shows beside the outcome.
TreeFacts tree_facts(const Job& j) {
  TreeFacts t;
  const TreeActivity& a = j.activity;
  t.blocked = a.blocked();
  t.still_s = secs(a.still_for());
  t.window_s = secs(a.window());
  t.cpu_s_in_window = static_cast<double>(a.cpu_in_window_ns()) / 1e9;
  t.cpu_s = static_cast<double>(a.cpu_total_ns()) / 1e9;
  t.longest_still_s = secs(a.longest_still());
  t.looks = a.looks();
  std::vector<ThreadStack> threads;
  for (const auto& [pid, p] : j.tree->last_look().processes) {
    if (p.facts.zombie()) continue;
    ++t.processes;
    t.threads += p.threads.size();
    for (auto& th : proc_threads(pid)) threads.push_back(std::move(th));
  }
  t.waiting_in = waiting_in(threads);
  return t;
}

// Whether the child has exited by now (it is held unreaped: its status is there to take).
bool exited(Job& job, Clock::time_point now) {
  if (job.ended_at) return true;
  Reaper& reaper = Reaper::instance();
  reaper.reap();
  if (auto status = reaper.take(job.r.pid)) {
    job.r.exit = ExitStatus::from_wait_status(*status);
    job.ended_at = now;
  }
  return job.ended_at.has_value();
}

void terminate(Job& job, Clock::time_point now) {
  // An exit that comes just before the signal is the child's own: looked at last, so that "SIGTERM
  // ended it" is never said of a child that had already exited.
  exited(job, now);
  job.terminating = true;
  job.term_at = now;
  // Also when the child itself ended while its stacks were taken: what is left of its tree gets
  // SIGTERM and its grace too. Only a signal the child got is reported as sent.
  job.tree->signal_all(SIGTERM);
  job.tree->signal_all(SIGCONT);  // a stopped process cannot act on SIGTERM
  if (!job.ended_at) job.r.sent_sigterm = true;
}

Job* find_serial(Jobs& running, uint64_t serial) {
  for (auto& j : running)
    if (j->serial == serial) return j.get();
  return nullptr;
}

// The stacks are in (or their budget is spent): the tree is ended. Debuggers still running for
// it are ended too; what they would have said is replaced by what /proc says, with the reason.
void stacks_taken(Jobs& running, Job& job, Clock::time_point now, const std::string& why_short) {
  Stacks taken = job.taking->take(why_short);
  job.taking.reset();
  for (auto& d : running)
    if (d->stacks_of == job.serial && !d->terminating && !d->ended_at) terminate(*d, now);
  if (job.stall_taking) {  // a live stall's: the tree goes on, watched
    job.stall_taking = false;
    job.r.stall_stacks = std::move(taken);
    if (job.spec->on_stall && job.r.stall)
      job.spec->on_stall(StallNote::Event::kStacksTaken, *job.r.stall, &job.r.stall_stacks);
    return;
  }
  job.r.stacks = std::move(taken);
  terminate(job, now);
}

// Time is called: the stacks of every process of the tree, all at once and within the budget,
// then SIGTERM. The debuggers run as jobs of this loop (started by start_debuggers), so that
// other children's watchdogs keep their time meanwhile.
// Whether the stall's stacks are still the tree's: taken, and the whole tree still since their
// taking began.
bool still_since_stall_stacks(const Job& job, Clock::time_point now) {
  return !job.r.stall_stacks.method.empty() && job.activity.blocked() &&
         job.activity.still_for() >= now - job.stall_stacks_at;
}

void escalate(Jobs& running, Job& job, DebuggersWanted& wanted, Clock::time_point now,
              bool for_stall = false) {
  if (job.terminating || job.taking) return;
  if (!for_stall && (!job.spec->collect_stacks || interrupted() || job.stacks_of)) {
    terminate(job, now);
    return;
  }
  // The stacks of a live stall, taken while the tree has been still ever since, are its stacks now.
  if (!for_stall && still_since_stall_stacks(job, now)) {
    job.r.stacks = job.r.stall_stacks;
    job.r.stacks.note += std::string(job.r.stacks.note.empty() ? "" : "; ") +
                         "taken when the stall was first seen, the tree still ever since";
    terminate(job, now);
    return;
  }
  job.stall_taking = for_stall;
  ++job.taking_gen;
  if (for_stall) job.stall_stacks_at = now;
  std::vector<ProcessId> pids;
  for (const auto& [pid, p] : job.tree->last_look().processes)
    if (!p.facts.zombie()) pids.push_back(pid);
  job.taking = std::make_unique<StackTaking>(pids, job.spec->stacks_budget_s);
  job.stacks_until = now + seconds(job.spec->stacks_budget_s);
  const auto& commands = job.taking->commands();
  for (size_t i = 0; i < commands.size(); ++i)
    wanted.push_back({job.serial, job.taking_gen, i, std::make_unique<LaunchSpec>(commands[i])});
  if (job.taking->complete()) stacks_taken(running, job, now, "");
}

// Starts the debuggers jobs want: up to kDebuggersPerTree of one tree at once (one budget for
// them all), at most `max` trees at once. A tree that waits spends its budget waiting: the
// deadline still bounds it; what is not started when the budget is spent is taken from /proc.
void start_debuggers(Jobs& running, DebuggersWanted& wanted, size_t max, Clock::time_point now) {
  std::map<uint64_t, size_t> per_tree;
  for (const auto& j : running)
    if (j->stacks_of && !j->ended_at) ++per_tree[j->stacks_of];
  for (auto it = wanted.begin(); it != wanted.end();) {
    Job* owner = find_serial(running, it->owner);
    if (!owner || !owner->taking || owner->taking_gen != it->gen) {  // ended meanwhile
      it = wanted.erase(it);
      continue;
    }
    const bool tree_started = per_tree.count(it->owner) > 0;
    if ((!tree_started && per_tree.size() >= max) || per_tree[it->owner] >= kDebuggersPerTree) {
      if (!tree_started) per_tree.erase(it->owner);
      ++it;
      continue;
    }
    DebuggerWanted d = std::move(*it);
    it = wanted.erase(it);
    d.spec->timeout_s = std::max(0.1, secs(owner->stacks_until - now));
    auto debugger = start_job(owner->index, *d.spec);
    debugger->own_spec = std::move(d.spec);
    if (!debugger->r.started) {
      owner->taking->add_result(d.slot, debugger->r);
      if (owner->taking->complete()) stacks_taken(running, *owner, now, "");
      continue;
    }
    debugger->stacks_of = d.owner;
    debugger->stacks_gen = d.gen;
    debugger->stacks_slot = d.slot;
    running.push_back(std::move(debugger));
    ++per_tree[d.owner];
  }
}

// Time is called on a job: the deadline passed, or a step stalled with its tree blocked. One
// last look first, so that what the report says of the tree is as of this moment.
void call_time(Jobs& running, Job& job, DebuggersWanted& wanted, Clock::time_point now) {
  look(job, now);
  job.called_at = now;
  job.r.called_after_s = secs(now - job.start);
  job.r.tree = tree_facts(job);
  escalate(running, job, wanted, now);
}

// A live-watched tree: a stall is said once it has lasted a whole window, its stacks taken once
// with the tree left running; its end said if it works again; with hang_after_s, a stall that
// long calls time on it as a hang.
void watch_stall(Jobs& running, Job& job, DebuggersWanted& wanted, Clock::time_point now) {
  const LaunchSpec& spec = *job.spec;
  const bool blocked = job.activity.blocked_through_window();
  if (spec.hang_after_s > 0 && blocked && secs(job.activity.still_for()) >= spec.hang_after_s) {
    job.r.still_too_long = true;
    job.r.hang_after_s = spec.hang_after_s;
    call_time(running, job, wanted, now);
    return;
  }
  if (!spec.note_stalls) return;
  if (blocked && !job.stalled) {
    // Every stall is said; the stacks are taken at the first (the report keeps that one).
    job.stalled = true;
    const TreeFacts t = tree_facts(job);
    StallNote n;
    n.after_s = secs(now - job.start);
    n.still_s = t.still_s;
    n.waiting_in = t.waiting_in;
    n.processes = t.processes;
    n.threads = t.threads;
    n.cpu_s_in_window = t.cpu_s_in_window;
    n.window_s = t.window_s;
    n.first = !job.r.stall;
    if (n.first) job.r.stall = n;
    if (spec.on_stall) spec.on_stall(StallNote::Event::kStalled, n, nullptr);
    if (n.first && spec.collect_stacks && !interrupted())
      escalate(running, job, wanted, now, /*for_stall=*/true);
  } else if (job.stalled && !job.activity.blocked() && !job.taking) {
    job.stalled = false;
    StallNote n = job.r.stall ? *job.r.stall : StallNote();
    n.resumed_after_s = secs(now - job.start);
    if (job.r.stall && job.r.stall->resumed_after_s < 0) job.r.stall->resumed_after_s = n.resumed_after_s;
    if (spec.on_stall) spec.on_stall(StallNote::Event::kResumed, n, nullptr);
  }
}

void watchdog(Jobs& running, Job& job, DebuggersWanted& wanted, Clock::time_point now) {
  if (job.taking && job.stall_taking) {
    // A stall's stacks never hold the program up: it ended (they are moot), its deadline passed
    // or its stall lasted --hang-after (they become the stacks time was called with, and the
    // budget they started with bounds them).
    if (job.ended_at) {
      stacks_taken(running, job, now, "the program ended before the debugger finished");
      return;
    }
    const bool deadline = now >= job.deadline;
    const bool too_long = job.spec->hang_after_s > 0 && job.activity.blocked_through_window() &&
                          secs(job.activity.still_for()) >= job.spec->hang_after_s;
    if (deadline || too_long) {
      job.r.deadline_passed = deadline;
      job.r.still_too_long = !deadline;
      if (too_long && !deadline) job.r.hang_after_s = job.spec->hang_after_s;
      look(job, now);
      job.called_at = now;
      job.r.called_after_s = secs(now - job.start);
      job.r.tree = tree_facts(job);
      job.stall_taking = false;  // the stacks, once in, end it
      // Begun at the stall, they get at most kStacksAfterCall more: the deadline bounds the run.
      job.stacks_until = std::min(job.stacks_until, now + seconds(kStacksAfterCallS));
    }
  }
  if (job.ended_at) return;
  if (job.taking) {
    if (now >= job.stacks_until) {
      char why[96];
      std::snprintf(why, sizeof why, "the stacks budget (%.1f s) was spent before its debugger finished",
                    job.spec->stacks_budget_s);
      stacks_taken(running, job, now, why);
    }
    return;
  }
  if (job.terminating) {
    if (!job.r.sent_sigkill && now >= job.term_at + seconds(job.spec->grace_s)) {
      job.tree->signal_all(SIGKILL);
      job.r.sent_sigkill = true;
    }
    return;
  }
  if (now >= job.deadline) {
    job.r.deadline_passed = true;
    call_time(running, job, wanted, now);
    return;
  }
  if (job.stacks_of) return;
  if (job.spec->note_stalls || job.spec->hang_after_s > 0) {
    watch_stall(running, job, wanted, now);
    if (job.taking || job.terminating) return;
  }
  if (auto hang = StepWatch::check(*job.channel, job.activity, now)) {
    job.r.step_hang = *hang;
    call_time(running, job, wanted, now);
  }
}

// The earliest moment the watchdog needs to look at this job again.
Clock::time_point next_wakeup(const Job& job, Clock::time_point now) {
  if (job.taking) return std::min(job.stacks_until, now + std::chrono::seconds(1));
  if (job.ended_at) return std::max(*job.ended_at + seconds(kLinger.count()), now);
  // Killed: waiting to reap it (a process in uninterruptible sleep may take a while).
  if (job.r.sent_sigkill) return now + milliseconds(50);
  if (job.terminating) return job.term_at + seconds(job.spec->grace_s);
  // A step already overdue is checked at each look (its tree working, or not looked at since):
  // its due time, passed, is no reason to wake.
  Clock::time_point t = job.deadline;
  const Clock::time_point due = StepWatch::next_due(*job.channel, job.deadline);
  if (due > now) t = std::min(t, due);
  if (!job.stacks_of) t = std::min(t, job.activity.next_look());
  return std::max(t, now);
}

void read_into(Fd& fd, Job& job, int which, Clock::time_point now) {
  char buf[65536];
  ssize_t n = ::read(fd.fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    fd.reset();
    return;
  }
  auto len = static_cast<size_t>(n);
  job.activity.output(now);  // the tree is doing something
  if (which == 0) job.r.out.append(buf, len);
  else if (which == 1) job.r.err.append(buf, len);
  else job.channel->feed(buf, len, now);
  if (which < 2 && job.spec->on_output) job.spec->on_output(which + 1, buf, len);
}

// A process of ours that no tree claimed, held until the run ends.
using Strays = std::map<std::pair<ProcessId, std::uint64_t>, ProcessHandle>;

// Orphans the kernel re-parented to us (a child subreaper): each goes to the tree that claims it
// (seen in it before, or started with its token). One that no tree claims (it left without a
// token, between two looks) goes to the only tree running; with several, it is a stray, killed
// when the run ends. A child in our own process group is not taken for an orphan of a tree (every
// tree's root leads a group of its own) unless every child of ours is a tree's
// (claim_every_child: forkcheck itself); in a program that embeds the supervisor it may be a child
// of the program's own.
void adopt_orphans(Jobs& running, Strays& strays) {
  std::set<ProcessId> known;
  size_t trees = 0;
  Job* only = nullptr;
  for (const auto& j : running) {
    if (!j->r.started) continue;
    known.insert(j->r.pid);
    if (!j->stacks_of) {
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
    for (auto& j : running)
      if (j->tree && !j->stacks_of && j->tree->claims(*f)) owner = j.get();
    if (!owner && f->pgid == our_group && !g_claim_every_child) continue;
    // Of this run but of no tree running (an earlier variant's): a stray, not the only tree's.
    const bool earlier_job = !owner && started_with_env(p, kRunTokenVar, run_token());
    if (!owner && trees == 1 && !earlier_job) owner = only;
    if (owner) {
      owner->tree->adopt(*f);
    } else if (auto h = ProcessHandle::open(p, f->start_time)) {
      strays.emplace(std::make_pair(p, f->start_time), std::move(*h));
    }
  }
}

void finish(Jobs& running, Strays& strays, Job& job) {
  // Whatever of its tree outlived the child is killed now, in its process group or out of it (a
  // grandchild that called setsid is found through child links, or among the orphans re-parented
  // to us, or by the job's token), in rounds until a fresh look finds nothing: nothing is left
  // behind, and no stranger is touched. The child is still held unreaped, so its group's id is
  // still ours: the group is killed as a whole each round, which reaches at once what its members
  // fork meanwhile.
  std::set<ProcessId> killed;
  // First what is there now (named in the report), and the group as a whole, whatever a look saw
  // of it: a chain of short-lived processes in it is always a generation ahead of a look, but
  // none escapes a group kill.
  adopt_orphans(running, strays);
  for (ProcessId p : job.tree->leftovers()) killed.insert(p);
  for (ProcessId p : group_members(job.r.pid)) killed.insert(p);
  job.tree->signal_all(SIGKILL);
  job.tree->wait_ended(kKillWaitMs);
  for (int round = 0; round < kKillRounds; ++round) {
    adopt_orphans(running, strays);
    const auto left = job.tree->leftovers();
    if (left.empty()) break;
    killed.insert(left.begin(), left.end());
    job.tree->signal_all(SIGKILL);
    job.tree->wait_ended(kKillWaitMs);
  }
  job.r.leftovers_killed.assign(killed.begin(), killed.end());
  // Said apart: what SIGKILL has not ended yet (a process in uninterruptible sleep), or what kept
  // ahead of every look.
  for (ProcessId p : job.tree->leftovers())
    if (p != job.r.pid) job.r.leftovers_surviving.push_back(p);
  const auto& strangers = job.tree->group_strangers();
  job.r.group_strangers.assign(strangers.begin(), strangers.end());
  Reaper::instance().release(job.r.pid);
  job.tree->root_reaped();
  job.out.reset();
  job.err.reset();
  job.chan.reset();
  job.r.duration_s = duration<double>(*job.ended_at - job.start).count();
  // Time was never called: no state to report, but what the watching measured.
  job.r.tree.cpu_s = static_cast<double>(job.activity.cpu_total_ns()) / 1e9;
  job.r.tree.longest_still_s = secs(job.activity.longest_still());
  job.r.tree.looks = job.activity.looks();
  job.r.result = job.channel->result();
  job.r.early_details = job.channel->early_details();
  job.r.steps = job.channel->step_log();
  job.r.bad_channel_lines = job.channel->bad_lines();
  job.r.bad_channel_line = job.channel->bad_line();
  job.r.bad_channel_why = job.channel->bad_why();
}

}  // namespace

void Supervisor::run(const std::vector<LaunchSpec>& specs, int jobs, const Done& done) {
  Reaper& reaper = Reaper::instance();
  std::deque<size_t> pending;
  for (size_t i = 0; i < specs.size(); ++i) pending.push_back(i);
  Jobs running;  // the specs' jobs, and debuggers taking stacks
  DebuggersWanted wanted;
  Strays strays;  // orphans no tree claimed
  const size_t max_jobs = static_cast<size_t>(std::max(1, jobs));
  Clock::time_point next_adoption = Clock::now();

  while (!pending.empty() || !running.empty()) {
    if (interrupted()) {
      // Nothing new starts; what runs is ended at once, without stacks, and reported as such.
      for (size_t i : pending) {
        ChildResult r;
        r.interrupted_by = interrupted();
        done(i, std::move(r));
      }
      pending.clear();
      wanted.clear();
      for (auto& j : running) {
        if (j->r.interrupted_by == 0) j->r.interrupted_by = interrupted();
        if (j->taking) stacks_taken(running, *j, Clock::now(), "forkcheck was interrupted before the debugger finished");
        if (!j->terminating && !j->ended_at) escalate(running, *j, wanted, Clock::now());
      }
    }
    start_debuggers(running, wanted, max_jobs, Clock::now());
    // A parked child (an announced step, its tree quiet) or one that is ending needs no CPU: it
    // does not hold a slot, so an expected hang waits for its watchdog beside working variants.
    size_t busy = 0, ours = 0;
    for (const auto& j : running) {
      busy += needs_cpu(*j) ? 1 : 0;
      ours += j->stacks_of ? 0 : 1;
    }
    while (may_start(busy, ours, max_jobs) && !pending.empty()) {
      size_t i = pending.front();
      pending.pop_front();
      auto job = start_job(i, specs[i]);
      if (!job->r.started) {
        done(i, std::move(job->r));
        continue;
      }
      running.push_back(std::move(job));
      ++busy;
      ++ours;
    }
    if (running.empty()) continue;

    auto now = Clock::now();
    Clock::time_point wake = now + std::chrono::seconds(1);
    std::vector<pollfd> fds;
    std::vector<std::pair<Job*, int>> owners;
    fds.push_back({reaper.wake_fd(), POLLIN, 0});
    owners.emplace_back(nullptr, -1);
    for (auto& j : running) {
      wake = std::min(wake, next_wakeup(*j, now));
      Fd* three[] = {&j->out, &j->err, &j->chan};
      for (int k = 0; k < 3; ++k)
        if (three[k]->fd >= 0) {
          fds.push_back({three[k]->fd, POLLIN, 0});
          owners.emplace_back(j.get(), k);
        }
    }
    auto wait_ms = std::chrono::duration_cast<milliseconds>(wake - now).count();
    int rc = ::poll(fds.data(), fds.size(), static_cast<int>(std::clamp<long long>(wait_ms + 1, 0, 1000)));
    now = Clock::now();
    if (rc > 0) {
      for (size_t k = 1; k < fds.size(); ++k) {
        if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        Job& j = *owners[k].first;
        Fd* three[] = {&j.out, &j.err, &j.chan};
        read_into(*three[owners[k].second], j, owners[k].second, now);
      }
    }
    reaper.reap();

    // Exits first: a child that exited by itself before its deadline was acted on is judged by
    // its own exit, even when the exit is noticed just after the deadline.
    for (auto& j : running) {
      if (j->ended_at) continue;
      if (auto status = reaper.take(j->r.pid)) {  // exited; held unreaped until finish()
        j->r.exit = ExitStatus::from_wait_status(*status);
        j->ended_at = now;
      }
    }
    // The trees, every kLookEvery: orphans to their trees first, then each tree's activity.
    if (now >= next_adoption) {
      adopt_orphans(running, strays);
      next_adoption = now + TreeActivity::kLookEvery;
    }
    for (auto& j : running)
      if (!j->ended_at && !j->called_at && !j->stacks_of && j->activity.look_due(now)) look(*j, now);

    for (auto it = running.begin(); it != running.end();) {
      Job& j = **it;
      watchdog(running, j, wanted, now);
      if (!j.taking && j.ended_at &&
          (!j.pipes_open() || now >= *j.ended_at + seconds(kLinger.count()))) {
        finish(running, strays, j);
        size_t index = j.index;
        ChildResult r = std::move(j.r);
        const uint64_t stacks_of = j.stacks_of, stacks_gen = j.stacks_gen;
        const size_t slot = j.stacks_slot;
        it = running.erase(it);
        if (!stacks_of) {
          done(index, std::move(r));
          continue;
        }
        // A debugger ended: its job is ended once all of its debuggers are.
        Job* owner = find_serial(running, stacks_of);
        if (owner && owner->taking && owner->taking_gen == stacks_gen) {
          owner->taking->add_result(slot, r);
          if (owner->taking->complete()) stacks_taken(running, *owner, now, "");
        }
        continue;
      }
      ++it;
    }
  }
  // Strays: SIGKILL through their handles, then reaped (they are our children).
  for (auto& [key, h] : strays) h.signal(SIGKILL);
  for (auto& [key, h] : strays)
    for (int i = 0; i < 100 && !h.ended(); ++i) ::usleep(2000);
  reaper.reap();
}

void claim_every_child() { g_claim_every_child = true; }

ChildResult supervise(const LaunchSpec& spec) {
  ChildResult out;
  Supervisor().run({spec}, 1, [&](size_t, ChildResult&& r) { out = std::move(r); });
  return out;
}

}  // namespace fc::harness
