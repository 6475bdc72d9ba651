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

#include "harness/platform/process_info.h"
#include "harness/platform/zygote.h"
#include "harness/stacks/stack_taking.h"
#include "harness/supervise/channel_reader.h"
#include "harness/supervise/guardian.h"
#include "harness/supervise/interrupt.h"
#include "harness/supervise/reaper.h"
#include "harness/supervise/step_watch.h"
#include "harness/supervise/supervisor.h"
#include "launch/boost_process_v1.h"
#include "launch/fdio_posix.h"

#ifdef __APPLE__
extern char** environ;  // macOS's <unistd.h> does not declare it
#endif

namespace fc::harness {
namespace {

using std::chrono::duration;
using std::chrono::milliseconds;

// After the child itself ended, how long its descendants may keep the output pipes open.
constexpr duration<double> kLinger{1.0};

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(duration<double>(s));
}

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
  std::optional<Clock::time_point> ended_at;  // the child itself was reaped
  bool terminating = false;
  std::unique_ptr<ChannelReader> channel;
  StepWatch steps;  // when an announced step is hung
  uint64_t serial = 0;  // unique in this run: how a debugger names the job it serves
  // A hung job whose stacks are being taken: it is ended once its debuggers are done.
  std::unique_ptr<StackTaking> taking;
  // A debugger taking the stacks of job `stacks_of` (its command `stacks_slot`): ours, not
  // reported. 0: not a debugger.
  uint64_t stacks_of = 0;
  size_t stacks_slot = 0;
  std::unique_ptr<LaunchSpec> own_spec;  // a debugger's command outlives the StackTaking

  bool pipes_open() const { return out.fd >= 0 || err.fd >= 0 || chan.fd >= 0; }
};

using Jobs = std::list<std::unique_ptr<Job>>;

// A debugger to start for a hung job, when fewer than --jobs debuggers run.
struct DebuggerWanted {
  uint64_t owner = 0;
  size_t slot = 0;
  std::unique_ptr<LaunchSpec> spec;
};
using DebuggersWanted = std::deque<DebuggerWanted>;

// Whether it needs a CPU now: not while parked in a step with its whole process group idle,
// not while its stacks are taken or it ends; debuggers are counted apart.
bool needs_cpu(Job& j, Clock::time_point now) {
  if (j.ended_at || j.terminating || j.taking || j.stacks_of) return false;
  return !j.steps.idle_in_steps(*j.channel, now, [&]() -> std::optional<uint64_t> {
    uint64_t total = 0;
    for (pid_t p : group_members(j.r.pid)) total += cpu_ticks(p).value_or(0);
    return total;
  });
}

std::string resolve_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  auto p = bp::search_path(name);
  return p.empty() ? name : p.string();
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
      // Runs in the child between fork and exec; the harness is single-threaded, so this is safe.
      auto setup = [=](auto& exec) {
        exec.env = envp_data;  // prepared before the fork: nothing is allocated here
        ::setpgid(0, 0);
#ifdef __linux__
        ::prctl(PR_SET_PTRACER, static_cast<unsigned long>(self), 0UL, 0UL, 0UL);  // kept by exec
#endif
        ::dup2(out_w, STDOUT_FILENO);
        ::dup2(err_w, STDERR_FILENO);
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
  Reaper::instance().watch(job->r.pid);
  guardian_track_group(job->r.pid);
  job->r.started = true;
  job->deadline = job->start + seconds(spec.timeout_s);
  job->out = std::move(out.read);
  job->err = std::move(err.read);
  if (with_channel) job->chan = std::move(chan.read);
  job->channel = std::make_unique<ChannelReader>(job->start);
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

void signal_group(Job& job, int sig) { ::kill(-job.r.pid, sig); }

void terminate(Job& job, Clock::time_point now) {
  job.terminating = true;
  job.term_at = now;
  // Also when the child itself ended while its stacks were taken: what is left of its group
  // gets SIGTERM and its grace too. Only a signal the child got is reported as sent.
  signal_group(job, SIGTERM);
  signal_group(job, SIGCONT);  // a stopped process cannot act on SIGTERM
  if (!job.ended_at) job.r.sent_sigterm = true;
}

void stacks_taken(Job& job, Clock::time_point now) {
  job.r.stacks = job.taking->take();
  job.taking.reset();
  terminate(job, now);
}

// A hang: the stacks of the tree while it is still stuck, then SIGTERM. The debuggers run as
// jobs of this loop (started by start_debuggers), so that other children's watchdogs keep their
// time meanwhile.
void escalate(Job& job, DebuggersWanted& wanted, Clock::time_point now) {
  if (job.terminating || job.taking) return;
  if (!job.spec->collect_stacks || interrupted()) {
    terminate(job, now);
    return;
  }
  job.taking =
      std::make_unique<StackTaking>(group_members(job.r.pid), job.spec->stacks_time_limit_s);
  const auto& commands = job.taking->commands();
  for (size_t i = 0; i < commands.size(); ++i)
    wanted.push_back({job.serial, i, std::make_unique<LaunchSpec>(commands[i])});
  if (job.taking->complete()) stacks_taken(job, now);
}

Job* find_serial(Jobs& running, uint64_t serial) {
  for (auto& j : running)
    if (j->serial == serial) return j.get();
  return nullptr;
}

// Starts the debuggers hung jobs want, at most `max` at once: gdb on a libtorch process takes
// hundreds of MiB, and each one holds pipes.
void start_debuggers(Jobs& running, DebuggersWanted& wanted, size_t max, Clock::time_point now) {
  size_t debugging = 0;
  for (const auto& j : running) debugging += j->stacks_of ? 1 : 0;
  while (debugging < max && !wanted.empty()) {
    DebuggerWanted w = std::move(wanted.front());
    wanted.pop_front();
    Job* owner = find_serial(running, w.owner);
    if (!owner || !owner->taking) continue;  // ended meanwhile (an interrupt)
    auto debugger = start_job(owner->index, *w.spec);
    debugger->own_spec = std::move(w.spec);
    if (!debugger->r.started) {
      owner->taking->add_result(w.slot, debugger->r);
      if (owner->taking->complete()) stacks_taken(*owner, now);
      continue;
    }
    debugger->stacks_of = w.owner;
    debugger->stacks_slot = w.slot;
    running.push_back(std::move(debugger));
    ++debugging;
  }
}

void watchdog(Job& job, DebuggersWanted& wanted, Clock::time_point now) {
  if (job.ended_at || job.taking) return;
  if (job.terminating) {
    if (!job.r.sent_sigkill && now >= job.term_at + seconds(job.spec->grace_s)) {
      signal_group(job, SIGKILL);
      job.r.sent_sigkill = true;
    }
    return;
  }
  if (now >= job.deadline) {
    job.r.deadline_passed = true;
    escalate(job, wanted, now);
    return;
  }
  if (auto hang = job.steps.check(*job.channel, now)) {
    job.r.step_hang = *hang;
    escalate(job, wanted, now);
  }
}

// The earliest moment the watchdog needs to look at this job again.
Clock::time_point next_wakeup(const Job& job, Clock::time_point now) {
  if (job.taking) return now + std::chrono::seconds(1);  // its debuggers' ends wake the loop
  if (job.ended_at) return std::max(*job.ended_at + seconds(kLinger.count()), now);
  // Killed: waiting to reap it (a process in uninterruptible sleep may take a while).
  if (job.r.sent_sigkill) return now + milliseconds(50);
  if (job.terminating) return job.term_at + seconds(job.spec->grace_s);
  const auto due = job.steps.next_due(*job.channel, now, Clock::time_point::max());
  if (due == Clock::time_point::max()) return job.deadline;
  return std::min(job.deadline, std::max(due, now + milliseconds(50)));
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
  if (which == 0) job.r.out.append(buf, len);
  else if (which == 1) job.r.err.append(buf, len);
  else job.channel->feed(buf, len, now);
}

void finish(Job& job, Clock::time_point now) {
  // Whatever of its tree outlived the child is killed now, in its process group or out of it
  // (a grandchild that called setsid still carries the job's token): nothing is left behind.
  auto left = group_members(job.r.pid);
  for (pid_t p : processes_with_env(kRunTokenVar, job.token))
    if (std::find(left.begin(), left.end(), p) == left.end()) left.push_back(p);
  if (!left.empty()) {
    signal_group(job, SIGKILL);
    for (pid_t p : left) ::kill(p, SIGKILL);
    job.r.leftovers_killed.assign(left.begin(), left.end());
  }
  job.out.reset();
  job.err.reset();
  job.chan.reset();
  job.r.duration_s = duration<double>(*job.ended_at - job.start).count();
  (void)now;
  job.r.result = job.channel->result();
  job.r.early_details = job.channel->early_details();
  job.r.steps = job.channel->step_log();
  job.r.bad_channel_lines = job.channel->bad_lines();
}

}  // namespace

void Supervisor::run(const std::vector<LaunchSpec>& specs, int jobs, const Done& done) {
  Reaper& reaper = Reaper::instance();
  std::deque<size_t> pending;
  for (size_t i = 0; i < specs.size(); ++i) pending.push_back(i);
  Jobs running;  // the specs' jobs, and debuggers taking stacks
  DebuggersWanted wanted;
  const size_t max_jobs = static_cast<size_t>(std::max(1, jobs));

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
        if (j->taking) stacks_taken(*j, Clock::now());  // with what the debuggers gave so far
        if (!j->terminating && !j->ended_at) escalate(*j, wanted, Clock::now());
      }
    }
    start_debuggers(running, wanted, max_jobs, Clock::now());
    // A parked child (an announced step gone still, its group idle) or one that is ending needs
    // no CPU: it does not hold a slot, so an expected hang waits for its watchdog beside working
    // variants.
    size_t busy = 0, ours = 0;
    const auto looked = Clock::now();
    for (const auto& j : running) {
      busy += needs_cpu(*j, looked) ? 1 : 0;
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

    for (auto it = running.begin(); it != running.end();) {
      Job& j = **it;
      if (!j.ended_at) {
        if (auto status = reaper.take(j.r.pid)) {
          j.r.exit = ExitStatus::from_wait_status(*status);
          j.ended_at = now;
        }
      }
      watchdog(j, wanted, now);
      if (!j.taking && j.ended_at &&
          (!j.pipes_open() || now >= *j.ended_at + seconds(kLinger.count()))) {
        finish(j, now);
        size_t index = j.index;
        ChildResult r = std::move(j.r);
        const uint64_t stacks_of = j.stacks_of;
        const size_t slot = j.stacks_slot;
        it = running.erase(it);
        if (!stacks_of) {
          done(index, std::move(r));
          continue;
        }
        // A debugger ended: its hung job is ended once all of its debuggers are.
        Job* owner = find_serial(running, stacks_of);
        if (owner && owner->taking) {
          owner->taking->add_result(slot, r);
          if (owner->taking->complete()) stacks_taken(*owner, now);
        }
        continue;
      }
      ++it;
    }
  }
  reaper.reap();
}

ChildResult supervise(const LaunchSpec& spec) {
  ChildResult out;
  Supervisor().run({spec}, 1, [&](size_t, ChildResult&& r) { out = std::move(r); });
  return out;
}

}  // namespace fc::harness
