// The zygote (harness/supervise/zygote.h, repros/core/zygote_server.h): a forked copy must be what
// an exec would have made, as far as the harness and the report can tell: our child, its own
// process group, its own stdio, the job's run token where /proc shows it, its true exit status.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/platform/process_info.h"
#include "harness/supervise/classify.h"
#include "harness/supervise/guardian.h"
#include "harness/supervise/reaper.h"
#include "harness/supervise/supervisor.h"
#include "harness/supervise/zygote.h"
#include "launch/boost_process_v1.h"

namespace fc::harness {
namespace {

std::string read_all(int fd) {
  std::string s;
  char buf[65536];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) s.append(buf, static_cast<size_t>(n));
  return s;
}

int ppid_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  char state;
  int ppid = 0;
  rest >> state >> ppid;
  return ppid;
}

// The status of our child `pid`, through the Reaper (it owns waitpid in this process).
int wait_status(pid_t pid) {
  Reaper::instance().watch(pid);
  for (int i = 0; i < 2000; ++i) {
    Reaper::instance().reap();
    if (auto s = Reaper::instance().take(pid)) return *s;
    ::usleep(5000);
  }
  ADD_FAILURE() << "pid " << pid << " was not reaped within 10 s";
  return -1;
}

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int p[2];
    EXPECT_EQ(::pipe2(p, O_CLOEXEC), 0);
    r = p[0];
    w = p[1];
  }
  ~Pipe() {
    if (r >= 0) ::close(r);
    if (w >= 0) ::close(w);
  }
  void close_write() {
    ::close(w);
    w = -1;
  }
};

TEST(Zygote, ForkedListIsTheExecdListAndTheProcessIsOurs) {
  Zygote z(FC_REPRO);
  ASSERT_TRUE(z.ready()) << z.why_not();
  Pipe out, err;
  std::string why;
  const std::string token = run_token() + "-zygote-test";
  auto pid = z.start({"--list"}, out.w, err.w, -1, {{kRunTokenVar, token}}, why);
  ASSERT_TRUE(pid) << why;
  out.close_write();
  err.close_write();
  const std::string listed = read_all(out.r);
  const int status = wait_status(*pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;

  LaunchSpec spec;
  spec.argv = {FC_REPRO, "--list"};
  spec.channel = false;
  spec.capture_cap = 8u << 20;
  auto execd = supervise(spec);
  EXPECT_EQ(execd.started_via, "exec");
  EXPECT_EQ(nlohmann::json::parse(listed), nlohmann::json::parse(execd.out.text()));
}

TEST(Zygote, CopyIsOurChildInItsOwnGroupWithTheJobToken) {
  Zygote z(FC_REPRO);
  ASSERT_TRUE(z.ready()) << z.why_not();
  Pipe out, err;
  std::string why;
  const std::string token = run_token() + "-77";
  // A variant that hangs for good (the fork child waits on a guard the parent held), so there
  // is time to look at it.
  auto pid = z.start({"--run", "static-init-fork", "--variant", "fork"}, out.w, err.w, -1,
                     {{kRunTokenVar, token}}, why);
  ASSERT_TRUE(pid) << why;
  bool reparented = false;
  for (int i = 0; i < 400 && !reparented; ++i) {
    reparented = ppid_of(*pid) == ::getpid();
    if (!reparented) ::usleep(5000);
  }
  EXPECT_TRUE(reparented) << "parent is " << ppid_of(*pid);
  EXPECT_EQ(::getpgid(*pid), *pid);
  // The copy writes its token into its environment itself, as it starts: perhaps after the
  // re-parenting was seen.
  std::vector<ProcessId> found;
  for (int i = 0; i < 400; ++i) {
    found = processes_with_env(kRunTokenVar, token);
    if (std::find(found.begin(), found.end(), *pid) != found.end()) break;
    ::usleep(5000);
  }
  EXPECT_NE(std::find(found.begin(), found.end(), *pid), found.end())
      << "the token must be where /proc/PID/environ shows it";
  ::kill(-*pid, SIGKILL);
  const int status = wait_status(*pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
}

TEST(Zygote, ExitStatusIsTheCommandsOwn) {
  Zygote z(FC_REPRO);
  ASSERT_TRUE(z.ready()) << z.why_not();
  Pipe out, err;
  std::string why;
  auto pid = z.start({"--run", "no-such-case", "--variant", "x"}, out.w, err.w, -1,
                     {{kRunTokenVar, run_token() + "-78"}}, why);
  ASSERT_TRUE(pid) << why;
  err.close_write();
  out.close_write();
  EXPECT_NE(read_all(err.r).find("unknown case 'no-such-case'"), std::string::npos);
  const int status = wait_status(*pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << status;
}

TEST(Zygote, SupervisedVariantFromTheZygoteIsClassifiedAsUnderExec) {
  Zygotes zygotes(true);
  LaunchSpec spec;
  spec.argv = {FC_REPRO, "--run", "static-init-fork", "--variant", "fork"};
  spec.timeout_s = 20;
  spec.zygote = zygotes.for_program(FC_REPRO);
  auto forked = supervise(spec);
  spec.zygote = nullptr;
  auto execd = supervise(spec);
  EXPECT_EQ(forked.started_via, "zygote") << forked.start_note;
  EXPECT_EQ(execd.started_via, "exec");
  for (const auto* r : {&forked, &execd}) {
    EXPECT_EQ(classify(*r, true).outcome, Outcome::kHang) << r->started_via;
    ASSERT_TRUE(r->step_hang) << r->started_via;
    EXPECT_NE(r->step_hang->step.find("function-local static"), std::string::npos);
    EXPECT_FALSE(r->stacks.threads.empty());
  }
}

TEST(Zygote, VariantWithEnvironmentIsExecd) {
  Zygotes zygotes(true);
  LaunchSpec spec;
  spec.argv = {FC_REPRO, "--list"};
  spec.channel = false;
  spec.capture_cap = 8u << 20;
  spec.env = {{"OMP_NUM_THREADS", "1"}};  // read by libgomp as it loads: no fork can honour it
  spec.zygote = zygotes.for_program(FC_REPRO);
  auto r = supervise(spec);
  EXPECT_EQ(r.started_via, "exec");
  EXPECT_TRUE(r.exit.exited_ok());
}

TEST(Zygote, ProgramThatIsNoZygoteIsSaidAndExecFollows) {
  Zygote not_one("/bin/true", 5);
  EXPECT_FALSE(not_one.ready());
  EXPECT_NE(not_one.why_not().find("did not get ready"), std::string::npos) << not_one.why_not();

  Zygotes zygotes(true);
  LaunchSpec spec;
  spec.argv = {"/bin/echo", "hello"};
  spec.channel = false;
  spec.zygote = zygotes.for_program("/bin/echo");
  auto r = supervise(spec);
  EXPECT_EQ(r.started_via, "exec");
  EXPECT_NE(r.start_note.find("not forked from the zygote"), std::string::npos) << r.start_note;
  EXPECT_EQ(r.out.text(), "hello\n");
  EXPECT_NE(zygotes.why_off().find("/bin/echo"), std::string::npos);
}

// A fake zygote: a script that sends `messages` on FORKCHECK_ZYGOTE_FD, each framed as the
// protocol frames them (a 4-byte length, host order, then the JSON), then reads until forkcheck
// closes the socket. Returns its path.
std::filesystem::path fake_zygote(const std::string& name,
                                  const std::vector<std::string>& messages) {
  auto path = std::filesystem::temp_directory_path() /
              ("forkcheck-fake-zygote-" + name + "-" + std::to_string(::getpid()));
  std::string script = "#!/bin/sh\n";
  for (const auto& m : messages) {
    std::string frame;
    const auto n = static_cast<uint32_t>(m.size());
    char length[4];
    std::memcpy(length, &n, sizeof n);
    for (char b : length) {
      char octal[8];
      std::snprintf(octal, sizeof octal, "\\%03o", static_cast<unsigned char>(b));
      frame += octal;
    }
    script += "printf '" + frame + "%s' '" + m + "' >&\"$FORKCHECK_ZYGOTE_FD\"\n";
  }
  script += "exec cat <&\"$FORKCHECK_ZYGOTE_FD\" >/dev/null\n";
  std::ofstream(path) << script;
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

// JSON of the wrong type from the zygote is said in one line naming the field, and the variants
// are exec'd instead: never an exception out of the zygote's code (a raw nlohmann type_error).
TEST(Zygote, HelloOfTheWrongTypeIsNoZygote) {
  for (const std::string hello :
       {R"({"ready":"yes"})", R"({"ready":true,"threads":"one"})", R"(["ready"])", R"(7)"}) {
    SCOPED_TRACE(hello);
    const auto program = fake_zygote("hello", {hello});
    Zygote z(program.string(), 10);
    EXPECT_FALSE(z.ready());
    EXPECT_NE(z.why_not().find("did not get ready"), std::string::npos) << z.why_not();
    EXPECT_EQ(z.why_not().find("json.exception"), std::string::npos) << z.why_not();
    std::filesystem::remove(program);
  }
  const auto program = fake_zygote("hello", {R"({"ready":"yes"})"});
  Zygote z(program.string(), 10);
  EXPECT_NE(z.why_not().find("\"ready\" is a string (\"yes\"), not a boolean"), std::string::npos)
      << z.why_not();
  std::filesystem::remove(program);
}

// A zygote that goes quiet in the middle of its message is no zygote once the wait is over: the
// rest of the message is waited for under the same deadline, never for good.
TEST(Zygote, HelloCutShortIsWaitedForNoLongerThanTheDeadline) {
  const auto program = std::filesystem::temp_directory_path() /
                       ("forkcheck-fake-zygote-cut-" + std::to_string(::getpid()));
  std::ofstream(program) << "#!/bin/sh\nprintf '\\017\\000' >&\"$FORKCHECK_ZYGOTE_FD\"\n"
                         << "exec sleep 30\n";
  std::filesystem::permissions(program, std::filesystem::perms::owner_all);
  const auto t0 = std::chrono::steady_clock::now();
  {
    Zygote z(program.string(), 1);
    EXPECT_FALSE(z.ready());
    EXPECT_NE(z.why_not().find("no answer within 1 s"), std::string::npos) << z.why_not();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  std::filesystem::remove(program);
}

TEST(Zygote, AnswerOfTheWrongTypeIsGivenUpAndTheVariantExecd) {
  const std::string hello = R"({"ready":true,"threads":1,"pid":1})";
  for (const std::string reply :
       {R"({"pid":"123"})", R"({"pid":-5})", R"({"error":7})", R"("pid")"}) {
    SCOPED_TRACE(reply);
    const auto program = fake_zygote("reply", {hello, reply});
    Zygote z(program.string(), 10);
    ASSERT_TRUE(z.ready()) << z.why_not();
    Pipe out, err;
    std::string why;
    auto pid = z.start({"--list"}, out.w, err.w, -1, {{kRunTokenVar, run_token() + "-fake"}}, why);
    EXPECT_FALSE(pid);
    EXPECT_NE(why.find("not what forkcheck expects"), std::string::npos) << why;
    EXPECT_FALSE(z.ready()) << "a zygote that answers nonsense is given up";
    std::filesystem::remove(program);
  }
  // Under the supervisor: the variant is exec'd, and the report says why not forked.
  const auto program = fake_zygote("reply", {hello, R"({"pid":"123"})"});
  Zygote z(program.string(), 10);
  LaunchSpec spec;
  spec.argv = {"/bin/echo", "hello"};
  spec.channel = false;
  spec.zygote = &z;
  auto r = supervise(spec);
  EXPECT_EQ(r.started_via, "exec");
  EXPECT_NE(r.start_note.find("\"pid\" is a string (\"123\"), not an integer"), std::string::npos)
      << r.start_note;
  EXPECT_EQ(r.out.text(), "hello\n");
  std::filesystem::remove(program);
}

// Yama ptrace_scope=1: whatever forkcheck starts, exec'd or forked from a zygote, names forkcheck
// as its ptracer, so the debugger (forkcheck's child, the tree's sibling) may attach. strace shows
// the calls even on a kernel without Yama (where they fail with EINVAL).
TEST(Zygote, EveryProcessForkcheckStartsNamesItAsPtracer) {
  if (bp::search_path("strace").empty()) GTEST_SKIP() << "strace is not installed";
  const std::string dir = ::testing::TempDir() + "fc-ptracer-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  for (const char* zygote : {"", "--no-zygote"}) {
    const std::string trace = dir + "/strace.txt";
    LaunchSpec spec;
    spec.argv = {"strace", "-f",      "-qq",        "-e",  "trace=prctl",
                 "-o",     trace,     FC_FORKCHECK, "run", "static-init-fork",
                 "--only", "*/spawn", "--out",      dir};
    if (*zygote) spec.argv.push_back(zygote);
    spec.channel = false;
    spec.timeout_s = 60;
    auto r = supervise(spec);
    ASSERT_TRUE(r.exit.exited_ok()) << r.err.last_lines(5);
    std::ifstream in(trace);
    std::string line;
    int root = 0;
    std::set<int> declared;
    while (std::getline(in, line)) {
      const int pid = std::atoi(line.c_str());
      if (root == 0) root = pid;  // forkcheck's first line comes first
      if (line.find("PR_SET_PTRACER, " + std::to_string(root)) != std::string::npos)
        declared.insert(pid);
    }
    // the environment probe, the variant's process and its spawned worker at least
    EXPECT_GE(declared.size(), 3u) << (*zygote ? zygote : "with zygote");
    EXPECT_EQ(declared.count(root), 0u) << "forkcheck itself needs no ptracer";
  }
  std::filesystem::remove_all(dir);
}

TEST(Zygote, OffMeansNone) {
  Zygotes off(false);
  EXPECT_EQ(off.for_program(FC_REPRO), nullptr);
  EXPECT_NE(off.why_off().find("--no-zygote"), std::string::npos);
}

}  // namespace
}  // namespace fc::harness

namespace fc::harness {
namespace {

// A copy forked by the zygote starts as an exec'd one does: stdio and the channel only, an empty
// signal mask, the same dispositions; whatever descriptors and mask the supervising process has.
TEST(Zygote, CopyStartsWithWhatAnExecdChildStartsWith) {
  const int leaked = ::open("/dev/null", O_RDONLY);  // not close-on-exec, in the supervisor
  ASSERT_GE(leaked, 0);
  sigset_t usr1, old;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  ASSERT_EQ(::sigprocmask(SIG_BLOCK, &usr1, &old), 0);

  Zygote z(FC_REPRO);
  ASSERT_TRUE(z.ready()) << z.why_not();
  LaunchSpec spec;
  spec.argv = {FC_REPRO, "--start-state"};
  auto execd = supervise(spec);
  spec.zygote = &z;
  auto forked = supervise(spec);
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
  ::close(leaked);

  ASSERT_EQ(execd.started_via, "exec");
  ASSERT_EQ(forked.started_via, "zygote") << forked.start_note;
  const auto e = nlohmann::json::parse(execd.out.text(), nullptr, false);
  const auto f = nlohmann::json::parse(forked.out.text(), nullptr, false);
  ASSERT_TRUE(e.is_object()) << execd.out.text() << execd.err.text();
  ASSERT_TRUE(f.is_object()) << forked.out.text() << forked.err.text();
  EXPECT_EQ(e["fds"].size(), 4u) << "stdin, stdout, stderr, the channel: " << e["fds"].dump();
  EXPECT_EQ(f["fds"].size(), 4u) << "stdin, stdout, stderr, the channel: " << f["fds"].dump();
  EXPECT_EQ(e["blocked"], nlohmann::json::array());
  EXPECT_EQ(f["blocked"], nlohmann::json::array());
  EXPECT_EQ(f["ignored"], e["ignored"]);
}

TEST(ReproMain, StartsTheForkserverBeforeComputingTheVariants) {
  // A case's variants() may touch a device (cuda-before-fork calls cuInit): the forkserver must
  // have been forked by then, or its workers would inherit that state.
  LaunchSpec spec;
  spec.argv = {FC_REPRO,     "--run",          "graceful-shutdown", "--variant",
               "forkserver", "--start-method", "forkserver"};
  spec.env = {{"FORKCHECK_REPRO_TRACE", "1"}};
  spec.timeout_s = 60;
  auto r = supervise(spec);
  const std::string err = r.err.text();
  const auto server = err.find("forkcheck-repro: forkserver started");
  const auto variants = err.find("forkcheck-repro: variants computed");
  ASSERT_NE(server, std::string::npos) << err;
  ASSERT_NE(variants, std::string::npos) << err;
  EXPECT_LT(server, variants) << err;
}

TEST(ReproMain, AStartMethodThatIsNotTheVariantsIsAUsageError) {
  LaunchSpec spec;
  spec.argv = {FC_REPRO, "--run",          "graceful-shutdown", "--variant",
               "fork",   "--start-method", "forkserver"};
  spec.timeout_s = 60;
  auto r = supervise(spec);
  EXPECT_EQ(r.exit.code, 2);
  EXPECT_NE(r.err.text().find("starts its workers with fork, not forkserver"), std::string::npos)
      << r.err.text();
}

}  // namespace
}  // namespace fc::harness
