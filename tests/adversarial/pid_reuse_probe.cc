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
//             its stdout and exits; while the supervisor lingers for the grandchild, the decoy
//             takes C's pid and group. A finish() that signalled C's group after C was reaped
//             killed the decoy; now the group is never signalled once its leader is reaped.
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

// A process with pid `want`, leading a group of its own, that waits to be killed; 0 on failure.
pid_t place_decoy(pid_t want) {
  if (!set_last_pid(want - 1)) return 0;
  const pid_t d = ::fork();
  if (d == 0) {
    ::setpgid(0, 0);
    for (;;) ::pause();
  }
  return d == want ? d : 0;
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
    const pid_t decoy = place_decoy(r.pid);  // A is reaped: its pid is free
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

// F, in the linger scenario: supervises C (pid `c`), which leaves a grandchild holding its stdout;
// 0 when the grandchild was named and killed.
int supervise_the_orphan_maker(const char* fault_child, pid_t c) {
  fc::harness::start_guardian();
  if (!set_last_pid(c - 1)) return 77;
  ChildResult r = fc::harness::supervise(spec(fault_child, {"orphan"}, 30));
  if (r.pid != c) return fail("the child got pid " + std::to_string(r.pid) + ", not " + std::to_string(c));
  const pid_t grandchild = std::atoi(r.out.text().c_str());
  if (grandchild <= 0 || alive(grandchild)) return fail("the grandchild " + std::to_string(grandchild) + " was left");
  if (r.leftovers_killed.size() != 1 || r.leftovers_killed[0] != grandchild)
    return fail("leftovers_killed does not name the grandchild");
  std::printf("linger: the grandchild %d was killed\n", grandchild);
  std::fflush(stdout);
  return 0;
}

int linger_scenario(const char* fault_child) {
  const pid_t c = 500;
  int p[2];
  if (::pipe(p) != 0) return fail("pipe");
  // M: waits for C to be started and reaped, then puts the decoy at its pid while the supervisor
  // lingers for C's grandchild. Not the supervisor's own child: a stranger to it.
  const pid_t m = ::fork();
  if (m == 0) {
    ::close(p[0]);
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (!fc::launch::process_facts(c) && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(1ms);  // not started yet
    while (fc::launch::process_facts(c) && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(1ms);  // running, then a zombie until reaped
    const pid_t decoy = place_decoy(c);
    [[maybe_unused]] ssize_t n = ::write(p[1], &decoy, sizeof decoy);
    ::_exit(0);
  }
  ::close(p[1]);
  std::this_thread::sleep_for(20ms);
  const pid_t f = ::fork();
  if (f == 0) ::_exit(supervise_the_orphan_maker(fault_child, c));
  int status = 0;
  ::waitpid(f, &status, 0);
  pid_t decoy = 0;
  const bool placed = ::read(p[0], &decoy, sizeof decoy) == static_cast<ssize_t>(sizeof decoy) && decoy > 0;
  const bool decoy_lived = placed && alive(decoy);
  if (placed) ::kill(decoy, SIGKILL);
  while (::waitpid(-1, nullptr, 0) > 0) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77) return 77;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return fail("the supervisor's side failed");
  if (!placed) return fail("could not place the decoy at pid " + std::to_string(c));
  if (!decoy_lived) return fail("the decoy (pid " + std::to_string(decoy) + ") was killed");
  std::printf("linger: decoy pid %d lived\n", decoy);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return fail("usage: pid_reuse_probe guardian|linger FAULT_CHILD");
  if (::getpid() != 1) return fail("must run as PID 1 of a new PID namespace");
  if (!set_last_pid(100)) return 77;
  const std::string mode = argv[1];
  if (mode == "guardian") return guardian_scenario(argv[2]);
  if (mode == "linger") return linger_scenario(argv[2]);
  return fail("unknown mode " + mode);
}
