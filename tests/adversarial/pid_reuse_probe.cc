// A pid reused by a decoy, made deterministic: run as PID 1 of a new PID namespace (`unshare
// --pid --fork --mount-proc pid_reuse_probe MODE FAULT_CHILD`, as root), where pids are small and
// /proc/sys/kernel/ns_last_pid chooses the next one. A decoy is a process that gets the pid of a
// child the supervisor started and reaped, and leads a process group of that id: a stranger that
// any signal by stale pid or stale group id would hit.
//   guardian  the supervisor (this program's child F) runs A, which exits at once and is reaped,
//             beside B, which hangs; the decoy takes A's pid and group; F is SIGKILLed and its
//             guardian sweeps. A guardian that remembered every group it was told of killed the
//             decoy; one that forgot A when A was reaped does not.
//   linger    the supervisor runs C, which leaves a grandchild (in a session of its own) holding
//             its stdout and exits; while the supervisor lingers for the grandchild, a decoy tries
//             to take C's pid and group. A finish() that signalled C's group after C was reaped
//             killed such a decoy; now C is held unreaped until its tree is ended, so its pid
//             cannot be taken at all meanwhile: the decoy gets another one, and lives.
//   stale     the guardian dies mid-run and is reaped, its exit status kept; a new child gets its
//             pid. A status kept from the dead guardian passed for the new child's: it was taken
//             for ended, and killed. Now each child is watched afresh.
//   orphan    C's grandchild G is re-parented to the supervisor (a subreaper), adopted by C's tree,
//             exits and is reaped; a decoy with a child of its own takes G's pid; at C's deadline
//             the tree is ended. A tree walked from G's bare pid took in the decoy and its child
//             and killed them; now an orphan is walked only while it has its start time.
// Exit status 0 when the decoy lived and nothing of the supervised trees is left; 1 with what
// went wrong on stderr; 77 when ns_last_pid cannot be written (no such namespace here).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "harness/supervise/guardian.h"
#include "harness/supervise/supervisor.h"
#include "launch/process_tree.h"

namespace {

using namespace std::chrono_literals;
using fc::harness::ChildResult;
using fc::harness::LaunchSpec;
using fc::harness::Supervisor;
using fc::harness::TimeCalled;

int fail(const std::string& why) {
  std::fprintf(stderr, "pid_reuse_probe: %s\n", why.c_str());
  return 1;
}

bool set_last_pid(pid_t pid) {
  const int fd = ::open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
  if (fd < 0) return false;
  const std::string text = std::to_string(pid);
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

// A process that asks for pid `want` (it may get another one), leads a group of its own and waits
// to be killed; with `with_child`, it has a child of its own in its group, waiting too. Its pid.
pid_t place_decoy(pid_t want, bool with_child = false) {
  if (!set_last_pid(want - 1)) return 0;
  const pid_t d = ::fork();
  if (d == 0) {
    ::setpgid(0, 0);
    if (with_child && ::fork() == 0) {
      for (;;) ::pause();
    }
    for (;;) ::pause();
  }
  return d;
}

// The decoy's child, if it has one.
pid_t child_of(pid_t decoy) {
  for (int i = 0; i < 100; ++i) {
    auto kids = fc::launch::child_processes(decoy);
    if (!kids.empty()) return kids.front();
    std::this_thread::sleep_for(5ms);
  }
  return 0;
}

bool alive(pid_t pid) {
  auto f = fc::launch::process_facts(pid);
  return f && !f->zombie();
}

LaunchSpec spec(const char* fault_child, std::initializer_list<const char*> args, double timeout) {
  LaunchSpec s;
  s.argv = {fault_child};
  for (const char* a : args) s.argv.push_back(a);
  s.timeout_s = timeout;
  s.collect_stacks = false;
  s.grace_s = 0.2;
  return s;
}

// F, in the guardian scenario: writes the decoy's pid to `report`, then dies by SIGKILL.
[[noreturn]] void supervisor_killed_mid_run(const char* fault_child, int report) {
  fc::harness::start_guardian();
  std::vector<LaunchSpec> specs = {spec(fault_child, {"exit", "0"}, 30),
                                   spec(fault_child, {"hang"}, 30)};
  Supervisor().run(specs, 2, [&](size_t i, ChildResult&& r) {
    if (i != 0) return;
    pid_t decoy = place_decoy(r.pid);  // A is reaped: its pid is free
    if (decoy != r.pid) decoy = 0;
    [[maybe_unused]] ssize_t n = ::write(report, &decoy, sizeof decoy);
    std::this_thread::sleep_for(300ms);  // B is running, its guardian entry live
    ::kill(::getpid(), SIGKILL);
  });
  ::_exit(2);  // not reached: B hangs for 30 s
}

int guardian_scenario(const char* fault_child) {
  int p[2];
  if (::pipe(p) != 0) return fail("pipe");
  const pid_t f = ::fork();
  if (f == 0) {
    ::close(p[0]);
    supervisor_killed_mid_run(fault_child, p[1]);
  }
  ::close(p[1]);
  pid_t decoy = 0;
  if (::read(p[0], &decoy, sizeof decoy) != static_cast<ssize_t>(sizeof decoy) || decoy == 0)
    return fail("could not place the decoy at the reaped child's pid");
  ::waitpid(f, nullptr, 0);
  // The guardian was F's child: now ours (PID 1). Wait for it to finish its sweep.
  const auto until = std::chrono::steady_clock::now() + 10s;
  for (;;) {
    bool others = false;
    for (fc::launch::ProcessId c : fc::launch::child_processes(::getpid()))
      if (c != decoy) others = true;
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    if (!others) break;
    if (std::chrono::steady_clock::now() >= until) {
      std::string left;
      for (fc::launch::ProcessId c : fc::launch::child_processes(::getpid()))
        if (auto cf = fc::launch::process_facts(c))
          left += " " + std::to_string(c) + "(" + cf->state + ")";
      return fail("the guardian did not finish its sweep; still here:" + left);
    }
    std::this_thread::sleep_for(10ms);
  }
  const bool decoy_lived = alive(decoy);
  ::kill(decoy, SIGKILL);
  ::waitpid(decoy, nullptr, 0);
  if (!decoy_lived) return fail("the decoy (pid " + std::to_string(decoy) + ") was killed");
  std::printf("guardian: decoy pid %d lived; the hung child was killed by the guardian\n", decoy);
  return 0;
}

// F, in the linger and orphan scenarios: supervises C (pid `c`); 0 when its tree was ended as
// `mode` expects.
int supervise_c(const char* program, const char* mode, pid_t c) {
  fc::harness::start_guardian();
  if (!set_last_pid(c - 1)) return 77;
  const bool linger = std::string(mode) == "linger";
  ChildResult r =
      fc::harness::supervise(linger ? spec(program, {"orphan"}, 30) : spec(program, {}, 2.5));
  if (r.pid != c)
    return fail("the child got pid " + std::to_string(r.pid) + ", not " + std::to_string(c));
  if (linger) {
    const pid_t grandchild = std::atoi(r.out.text().c_str());
    if (grandchild <= 0 || alive(grandchild))
      return fail("the grandchild " + std::to_string(grandchild) + " was left");
    if (r.leftovers_killed.size() != 1 || r.leftovers_killed[0] != grandchild)
      return fail("leftovers_killed does not name the grandchild");
    std::printf("linger: the grandchild %d was killed\n", grandchild);
  } else if (r.called_for != TimeCalled::kDeadline) {
    return fail("the child ended before its deadline");
  }
  std::fflush(stdout);
  return 0;
}

// linger: C exits, leaving its grandchild; the decoy asks for C's pid once C is a zombie.
// orphan: C's grandchild G (pid c + 2) is adopted, exits and is reaped; the decoy, with a child,
// asks for G's pid.
int decoy_scenario(const char* program, const std::string& mode) {
  const pid_t c = 500;
  const pid_t target = mode == "linger" ? c : c + 2;
  int p[2];
  if (::pipe(p) != 0) return fail("pipe");
  // M: not the supervisor's own child, a stranger to it.
  const pid_t m = ::fork();
  if (m == 0) {
    ::close(p[0]);
    const auto until = std::chrono::steady_clock::now() + 10s;
    auto facts = [&] { return fc::launch::process_facts(target); };
    while (!facts() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(1ms);
    // linger: until C has exited (the supervisor holds it, a zombie); orphan: until G is reaped.
    while (std::chrono::steady_clock::now() < until) {
      auto f = facts();
      if (mode == "linger" ? (f && f->zombie()) : !f) break;
      std::this_thread::sleep_for(1ms);
    }
    const pid_t decoy = place_decoy(target, /*with_child=*/mode == "orphan");
    [[maybe_unused]] ssize_t n = ::write(p[1], &decoy, sizeof decoy);
    ::_exit(0);
  }
  ::close(p[1]);
  std::this_thread::sleep_for(20ms);
  const pid_t f = ::fork();
  if (f == 0) ::_exit(supervise_c(program, mode.c_str(), c));
  int status = 0;
  ::waitpid(f, &status, 0);
  pid_t decoy = 0;
  const bool placed =
      ::read(p[0], &decoy, sizeof decoy) == static_cast<ssize_t>(sizeof decoy) && decoy > 0;
  const pid_t decoys_child = placed && mode == "orphan" ? child_of(decoy) : 0;
  const bool decoy_lived = placed && alive(decoy);
  const bool child_lived = decoys_child == 0 || alive(decoys_child);
  if (placed) ::kill(-decoy, SIGKILL);
  while (::waitpid(-1, nullptr, 0) > 0) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77) return 77;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return fail("the supervisor's side failed");
  if (!placed) return fail("could not place the decoy");
  if (!decoy_lived) return fail("the decoy (pid " + std::to_string(decoy) + ") was killed");
  if (!child_lived)
    return fail("the decoy's child (pid " + std::to_string(decoys_child) + ") was killed");
  if (mode == "linger") {
    if (decoy == c)
      return fail("the decoy took the pid of a child the supervisor had not finished with");
    std::printf(
        "linger: pid %d was still held while its tree was ended; the decoy got pid %d and lived\n",
        c, decoy);
  } else {
    if (decoy != target || decoys_child == 0)
      return fail("the decoy did not take the orphan's pid");
    std::printf("orphan: decoy pid %d (the reaped orphan's) and its child %d lived\n", decoy,
                decoys_child);
  }
  return 0;
}

// The guardian dies; a child then gets its pid, and must be judged on its own exit.
int stale_scenario(const char* fault_child) {
  fc::harness::start_guardian();
  pid_t guardian = 0;  // our child in a session of its own, once it has called setsid
  for (int i = 0; i < 1000 && guardian == 0; ++i) {
    for (fc::launch::ProcessId c : fc::launch::child_processes(::getpid()))
      if (auto f = fc::launch::process_facts(c); f && f->sid == c) guardian = c;
    if (guardian == 0) std::this_thread::sleep_for(1ms);
  }
  if (guardian == 0) return fail("no guardian found");
  ::kill(guardian, SIGKILL);
  while (alive(guardian)) std::this_thread::sleep_for(1ms);
  fc::harness::supervise(
      spec(fault_child, {"exit", "0"}, 30));  // its reaping records the guardian's end
  if (!set_last_pid(guardian - 1)) return 77;
  const auto t0 = std::chrono::steady_clock::now();
  ChildResult r = fc::harness::supervise(spec(fault_child, {"sleep", "1"}, 30));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (r.pid != guardian)
    return fail("the child got pid " + std::to_string(r.pid) + ", not the guardian's " +
                std::to_string(guardian));
  if (!r.exit.ended || r.exit.code != 0 || r.exit.signal != 0 || took < 0.9)
    return fail("the child was judged on another's end: " + r.exit.describe());
  std::printf(
      "stale: the child with the dead guardian's pid %d lived its %.1f s and ended by itself\n",
      r.pid, took);
  return 0;
}

}  // namespace

// pid_reuse_probe guardian|linger|stale FAULT_CHILD, or pid_reuse_probe orphan ORPHAN_MAKER.
int main(int argc, char** argv) {
  if (argc < 3) return fail("usage: pid_reuse_probe guardian|linger|stale|orphan PROGRAM");
  if (::getpid() != 1) return fail("must run as PID 1 of a new PID namespace");
  if (!set_last_pid(100)) return 77;
  const std::string mode = argv[1];
  if (mode == "guardian") return guardian_scenario(argv[2]);
  if (mode == "stale") return stale_scenario(argv[2]);
  if (mode == "linger" || mode == "orphan") return decoy_scenario(argv[2], mode);
  return fail("unknown mode " + mode);
}
