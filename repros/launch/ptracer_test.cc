// Every worker process names forkcheck as its ptracer (launch/ptracer.h), so that forkcheck's
// debugger, a sibling of the hung tree, may attach under Yama's ptrace_scope=1: strace sees
// prctl(PR_SET_PTRACER, $FORKCHECK_PTRACER) in the worker of each start method, in the forkserver,
// and in a program that called init(); and none without the variable. On a kernel without Yama
// the call fails with EINVAL, which strace shows all the same.
// `ptracer_test --probe` starts one worker per method and prints who is who; main() is ours:
// launch::init() first, since spawned workers re-exec this program.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <forkcheck/launch.h>
#include "launch/boost_process_v1.h"
#include "launch/ptracer.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

FORKCHECK_WORKER(ptracer_who_am_i) { return {{"pid", ::getpid()}, {"ppid", ::getppid()}}; }

// The probe: one worker per start method, and the forkserver; prints their pids as JSON.
int ptracer_probe() {
  fc::launch::start_forkserver();  // while this process has one thread
  json out = {{"main", ::getpid()}};
  for (const char* m : {"fork", "spawn", "forkserver"}) {
    fc::launch::Launcher launcher(*fc::launch::parse_start_method(m));
    auto w = launcher.start("ptracer_who_am_i", nullptr);
    auto o = w.join(std::chrono::seconds(30));
    if (!o || o->status != fc::launch::WorkerOutcome::Status::kOk) return 1;
    out[m] = o->result;
  }
  std::cout << out.dump() << std::endl;
  return 0;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Traced {
  int status = -1;
  std::string trace, out, err;
};

// strace -f -e trace=prctl this_program --probe, with FORKCHECK_PTRACER=`ptracer` (unset
// when 0).
Traced run_probe_under_strace(const std::string& strace, int ptracer, const fs::path& dir) {
  const fs::path trace = dir / "trace", out = dir / "out", err = dir / "err";
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return {};
  self[n] = '\0';
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (ptracer > 0)
      ::setenv("FORKCHECK_PTRACER", std::to_string(ptracer).c_str(), 1);
    else
      ::unsetenv("FORKCHECK_PTRACER");
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0 || ::dup2(o, 1) < 0 || ::dup2(e, 2) < 0) ::_exit(126);
    ::execl(strace.c_str(), strace.c_str(), "-f", "-qq", "-e", "trace=prctl", "-o", trace.c_str(),
            self, "--probe", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  Traced t;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    const pid_t r = ::waitpid(pid, &t.status, WNOHANG);
    if (r == pid) break;
    if (std::chrono::steady_clock::now() > until) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &t.status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  t.trace = slurp(trace);
  t.out = slurp(out);
  t.err = slurp(err);
  return t;
}

// Pids that strace saw call prctl(PR_SET_PTRACER, `ptracer`): lines "PID prctl(PR_SET_PTRACER,
// N) = ...", or "PID prctl(PR_SET_PTRACER, N <unfinished ...>" when another process's call came
// in between (processes calling at the same moment, as on a busy machine).
std::vector<int> pids_declaring(const std::string& trace, int ptracer) {
  std::vector<int> pids;
  std::istringstream in(trace);
  const std::string call = "prctl(PR_SET_PTRACER, " + std::to_string(ptracer);
  for (std::string line; std::getline(in, line);) {
    const size_t at = line.find(call);
    if (at == std::string::npos) continue;
    const size_t after = at + call.size();
    if (after < line.size() && (line[after] == ')' || line[after] == ' '))
      pids.push_back(std::atoi(line.c_str()));
  }
  return pids;
}

bool has(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

TEST(Ptracer, EveryWorkerProcessNamesTheSupervisorAsItsPtracer) {
  const auto strace = fc::bp::search_path("strace");
  if (strace.empty())
    GTEST_SKIP() << "strace is not installed (ci/install-deps-debian.sh installs it)";
  const fs::path dir =
      fs::temp_directory_path() / ("forkcheck-ptracer-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  // Any live pid will do as the supervisor: this test process's. (On a kernel without Yama, as
  // where this was written, the call fails with EINVAL; strace shows it was made all the same.)
  const int supervisor = ::getpid();
  const Traced t = run_probe_under_strace(strace.string(), supervisor, dir);
  if (t.trace.empty() && !(WIFEXITED(t.status) && WEXITSTATUS(t.status) == 0))
    GTEST_SKIP() << "strace cannot trace here (no ptrace in this container?): " << t.err;
  ASSERT_TRUE(WIFEXITED(t.status) && WEXITSTATUS(t.status) == 0) << t.err << t.out;
  const json who = json::parse(t.out, nullptr, false);
  ASSERT_TRUE(who.is_object()) << t.out;

  const auto declared = pids_declaring(t.trace, supervisor);
  const int fork_pid = who["fork"]["pid"].get<int>(), spawn_pid = who["spawn"]["pid"].get<int>();
  const int forkserver_pid = who["forkserver"]["pid"].get<int>(),
            server_pid = who["forkserver"]["ppid"].get<int>();
  EXPECT_TRUE(has(declared, fork_pid)) << "fork worker " << fork_pid << "\n" << t.trace;
  EXPECT_TRUE(has(declared, spawn_pid)) << "spawn worker " << spawn_pid << "\n" << t.trace;
  EXPECT_TRUE(has(declared, forkserver_pid)) << "forkserver worker\n" << t.trace;
  EXPECT_TRUE(has(declared, server_pid)) << "the forkserver " << server_pid << "\n" << t.trace;
  EXPECT_TRUE(has(declared, who["main"].get<int>())) << "init()\n" << t.trace;
  EXPECT_NE(server_pid, who["main"].get<int>());

  // Without FORKCHECK_PTRACER nobody declares anything: the calls above came from it.
  const Traced plain = run_probe_under_strace(strace.string(), 0, dir);
  ASSERT_TRUE(WIFEXITED(plain.status) && WEXITSTATUS(plain.status) == 0) << plain.err;
  EXPECT_EQ(plain.trace.find("PR_SET_PTRACER"), std::string::npos) << plain.trace;
  fs::remove_all(dir);
}

TEST(Ptracer, ThisProgramReadTheVariableWhenItLoaded) {
  const char* v = std::getenv("FORKCHECK_PTRACER");
  const int expected = v ? std::atoi(v) : 0;
#ifdef __linux__
  EXPECT_EQ(fc::launch::supervisor_ptracer(), expected > 0 ? expected : 0);
#else
  EXPECT_EQ(fc::launch::supervisor_ptracer(), 0);
#endif
  errno = EDOM;
  fc::launch::allow_supervisor_ptrace();  // whatever it does, errno is as it was
  EXPECT_EQ(errno, EDOM);
}

}  // namespace

int main(int argc, char** argv) {
  fc::launch::init(argc, argv);  // a spawned worker runs here and exits
  if (argc > 1 && std::strcmp(argv[1], "--probe") == 0) return ptracer_probe();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
