// Smoke test of forkcheck's Windows code path: the job-object supervisor (supervisor_win32.cc),
// exit codes without signals (exit_status_win32.cc), and the start-method library's spawn
// (spawn_win32.cc, worker_win32.cc). ci/check-win32-cross.sh builds it with mingw-w64 and runs it
// under wine where wine is installed. Usage: supervisor_smoke SMOKE_CHILD_EXE
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include <forkcheck/launch.h>
#include "harness/supervise/classify.h"
#include "harness/supervise/supervisor.h"
#include "launch/win32.h"
#include "smoke_check.h"

FORKCHECK_WORKER(smoke_square) { return payload.at("x").get<int>() * payload.at("x").get<int>(); }
FORKCHECK_WORKER(smoke_throws) { throw std::runtime_error("as asked"); }

namespace {

using fc::harness::ChildResult;
using fc::harness::LaunchSpec;
using fc::harness::TimeCalled;
namespace launch = fc::launch;

using fc::smoke::check;
using fc::smoke::contains;
using fc::smoke::failures;

LaunchSpec spec(const std::string& child, std::initializer_list<std::string> args,
                double timeout_s = 30) {
  LaunchSpec s;
  s.argv = {child};
  s.argv.insert(s.argv.end(), args);
  s.timeout_s = timeout_s;
  s.grace_s = 0.5;
  return s;
}

bool alive(unsigned long pid) {
  fc::launch::win32::Handle p(::OpenProcess(SYNCHRONIZE, FALSE, pid));
  return p && ::WaitForSingleObject(p.get(), 0) == WAIT_TIMEOUT;
}

void supervisor_checks(const std::string& child) {
  ChildResult r = fc::harness::supervise(spec(child, {"ok"}));
  check(r.started && r.exit.exited_ok(), "ok: exits 0", r.start_error + r.exit.describe());
  check(contains(r.out.text(), "out-line") && contains(r.err.text(), "err-line"),
        "ok: stdout and stderr captured apart");
  check(r.result && r.result->value("outcome", "") == "ok", "ok: the result came on the channel");
  check(fc::harness::classify(r, true).outcome == fc::Outcome::kOk, "ok: classified ok");

  LaunchSpec with_env = spec(child, {"env", "FC_SMOKE"});
  with_env.env = {{"FC_SMOKE", "a value with spaces"}};
  r = fc::harness::supervise(with_env);
  check(contains(r.out.text(), "FC_SMOKE=a value with spaces"), "env: the spec's variable arrives",
        r.out.text());
  r = fc::harness::supervise(spec(child, {"env", "FORKCHECK_RUN"}));
  check(contains(r.out.text(), "FORKCHECK_RUN=fc-"), "env: the run token arrives", r.out.text());

  r = fc::harness::supervise(spec(child, {"exit", "3"}));
  check(r.exit.code == 3 && r.exit.signal == 0, "exit 3: an exit status", r.exit.describe());

  r = fc::harness::supervise(spec(child, {"crash"}));
  auto c = fc::harness::classify(r, false);
  check(c.outcome == fc::Outcome::kCrash && contains(c.message, "STATUS_ACCESS_VIOLATION"),
        "crash: an access violation is a crash with its name", c.message);
  check(r.exit.to_json()["signal"] == 0xC0000005u, "crash: the exception code in the report",
        r.exit.to_json().dump());

  auto t0 = std::chrono::steady_clock::now();
  r = fc::harness::supervise(spec(child, {"hang"}, 30));
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  check(r.step_hang.has_value() && r.step_hang->step == "wait forever" && took < 15,
        "hang: a step that stops is a hang, long before the deadline",
        "took " + std::to_string(took) + " s; " + fc::harness::classify(r, true).message);
  check(r.sent_sigkill, "hang: the job was terminated");
  // Its stacks, taken before the kill: the child's thread, parked in Sleep, called from the child's
  // own code (named where dbghelp finds its symbols, else by its module).
  check(r.stacks.method == "dbghelp", "hang: stacks taken with dbghelp", r.stacks.note);
  std::string frames;
  bool walked = false;  // one thread: in Sleep, below it the child's code
  for (const auto& t : r.stacks.threads) {
    if (t.pid != static_cast<int>(r.pid)) continue;
    bool in_sleep = false, in_child = false;
    for (const auto& f : t.frames) {
      frames += "  " + f.function + " " + f.where + "\n";
      in_sleep =
          in_sleep || contains(f.function, "Sleep") || contains(f.function, "DelayExecution");
      in_child = in_child || f.function == "main" || contains(f.where, "smoke_child");
    }
    walked = walked || (in_sleep && in_child);
    frames += "\n";
  }
  check(walked, "hang: the child's stack shows Sleep called from the child's code",
        r.stacks.note + "\n" + frames);

  // FORKCHECK_STACKS: none takes none; a POSIX debugger asked for is named as not available.
  ::_putenv_s("FORKCHECK_STACKS", "none");  // getenv reads the CRT's copy: _putenv_s sets it
  r = fc::harness::supervise(spec(child, {"hang"}, 30));
  check(r.step_hang.has_value() && r.stacks.method == "none" && r.stacks.threads.empty() &&
            contains(r.stacks.note, "FORKCHECK_STACKS=none"),
        "hang, FORKCHECK_STACKS=none: no stacks, and the note says why", r.stacks.note);
  ::_putenv_s("FORKCHECK_STACKS", "gdb");
  r = fc::harness::supervise(spec(child, {"hang"}, 30));
  check(r.stacks.method == "dbghelp" &&
            contains(r.stacks.note, "FORKCHECK_STACKS=gdb is not available"),
        "hang, FORKCHECK_STACKS=gdb: dbghelp, and the note says gdb is not", r.stacks.note);
  ::_putenv_s("FORKCHECK_STACKS", "");  // empty: removed

  r = fc::harness::supervise(spec(child, {"sleep"}, 1.5));
  check(r.called_for == TimeCalled::kDeadline && r.duration_s < 10, "deadline: ends the child",
        fc::harness::classify(r, false).message);

  r = fc::harness::supervise(spec(child, {"tree"}));
  unsigned long grandchild = 0;
  std::sscanf(r.out.text().c_str(), "grandchild %lu", &grandchild);
  check(grandchild != 0 && !r.leftovers_killed.empty(),
        "tree: the grandchild left behind is killed", r.out.text());
  check(grandchild != 0 && !alive(grandchild), "tree: and is gone");

  LaunchSpec flood = spec(child, {"flood", "4194304"});
  flood.capture_cap = 1024;
  r = fc::harness::supervise(flood);
  check(r.out.total_bytes() == 4194304 && r.out.truncated(), "flood: 4 MiB counted, capped",
        std::to_string(r.out.total_bytes()));

  r = fc::harness::supervise(spec(child + "-missing", {}));
  check(!r.started && contains(r.start_error, "cannot start"), "missing program: not started",
        r.start_error);

  std::vector<LaunchSpec> many(6, spec(child, {"ok"}));
  int done = 0;
  fc::harness::Supervisor().run(many, 3,
                                [&](size_t, ChildResult&& x) { done += x.exit.exited_ok(); });
  check(done == 6, "six children, three at a time, all ok");
}

void launch_checks() {
  launch::Worker w =
      launch::Launcher(launch::StartMethod::kSpawn).start("smoke_square", {{"x", 7}});
  auto o = w.join(std::chrono::seconds(30));
  check(o && o->status == launch::WorkerOutcome::Status::kOk && o->result == 49,
        "spawn: the worker ran and returned", o ? o->error : "still running");
  launch::Worker t =
      launch::Launcher(launch::StartMethod::kSpawn).start("smoke_throws", nlohmann::json::object());
  o = t.join(std::chrono::seconds(30));
  check(o && o->status == launch::WorkerOutcome::Status::kError && o->error == "as asked",
        "spawn: the worker's exception comes back", o ? o->error : "still running");
  for (auto method : {launch::StartMethod::kFork, launch::StartMethod::kForkserver}) {
    std::string what;
    try {
      launch::Launcher(method).start("smoke_square", {{"x", 1}});
    } catch (const std::logic_error& e) {
      what = e.what();
    }
    check(contains(what, "not available on Windows"),
          std::string(launch::to_string(method)) + ": refused", what);
  }
  check(launch::thread_count() >= 1, "thread_count", std::to_string(launch::thread_count()));
}

}  // namespace

int main(int argc, char** argv) {
  launch::init(argc, argv);  // a spawned worker runs here and exits
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SMOKE_CHILD_EXE\n", argv[0]);
    return 2;
  }
  supervisor_checks(argv[1]);
  launch_checks();
  std::printf("%s: %d failed\n", failures ? "FAILED" : "passed", failures);
  return failures ? 1 : 0;
}
