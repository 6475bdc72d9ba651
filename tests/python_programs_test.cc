// `forkcheck exec` and `watch` on Python programs (tests/python_programs/), once per interpreter
// this machine has: pyenv's CPython 3.6 to 3.13 (no torch, no debug symbols) and Debian's
// /usr/bin/python3. What the program's own bootstrap tells, without a debugger: the line a hung
// worker waits on, the fork's line and the threads beside it by their Python names, a crash's
// line, a spawned worker's crash under a parent that exits 0, and the catalog's fix for a known
// message. Each interpreter that is missing is skipped, saying why.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/supervise/python_channel.h"
#include "harness/supervise/python_stacks_ask_posix.h"
#include "read_text.h"
#include "reports/known_causes.h"
#include "run_forkcheck.h"

namespace {

namespace fs = std::filesystem;
using fc::test_text::contains;
using fc::test_text::slurp;
using nlohmann::json;

struct Interpreter {
  std::string label;   // pyenv_3_12, system
  std::string path;    // empty when missing
  std::string reason;  // why it is missing
};

// gtest prints a failing test's parameter: the interpreter, not its bytes.
void PrintTo(const Interpreter& i, std::ostream* os) {
  *os << i.label << " (" << (i.path.empty() ? i.reason : i.path) << ")";
}

// pyenv's newest 3.N.x for N in 6..13 under $PYENV_ROOT (or ~/.pyenv), and /usr/bin/python3.
std::vector<Interpreter> interpreters() {
  std::vector<Interpreter> found;
  const char* root_env = std::getenv("PYENV_ROOT");
  const char* home = std::getenv("HOME");
  const fs::path root = root_env ? fs::path(root_env) : fs::path(home ? home : "/root") / ".pyenv";
  for (int minor = 6; minor <= 13; ++minor) {
    const std::string version = "3." + std::to_string(minor);
    Interpreter i{"pyenv_3_" + std::to_string(minor), "",
                  "no pyenv Python " + version + " under " + root.string()};
    std::error_code ec;
    std::string newest;
    for (const auto& e : fs::directory_iterator(root / "versions", ec)) {
      const std::string name = e.path().filename().string();
      const fs::path python = e.path() / "bin" / ("python" + version);
      if (name.rfind(version + ".", 0) == 0 && ::access(python.c_str(), X_OK) == 0 &&
          name > newest) {
        newest = name;
        i.path = python.string();
      }
    }
    found.push_back(i);
  }
  found.push_back({"system", ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "",
                   "no /usr/bin/python3"});
  return found;
}

// The line of `marker` (a "# <name>" comment) in a program.
int line_of(const fs::path& program, const std::string& marker) {
  std::ifstream in(program);
  std::string text;
  for (int n = 1; std::getline(in, text); ++n)
    if (contains(text, "# <" + marker + ">")) return n;
  ADD_FAILURE() << "no # <" << marker << "> in " << program;
  return -1;
}

bool has_torch(const std::string& python) {
  const std::string command = python + " -c 'import torch' >/dev/null 2>&1";
  return std::system(command.c_str()) == 0;
}

class PythonPrograms : public ::testing::TestWithParam<Interpreter> {
 protected:
  void SetUp() override {
    if (GetParam().path.empty()) GTEST_SKIP() << GetParam().reason;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = info->name();
    for (char& c : name)
      if (c == '/') c = '-';
    dir_ =
        fs::temp_directory_path() / ("forkcheck-pyprog-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  static fs::path program(const std::string& name) { return fs::path(FC_PYTHON_PROGRAMS) / name; }

  // forkcheck COMMAND --quiet --out DIR OPTIONS -- PYTHON PROGRAM ARGS; the report's one variant.
  fc::test_run::Run run(const std::string& command, const std::string& name,
                        std::vector<std::string> options = {},
                        const std::vector<std::string>& program_args = {}) {
    std::vector<std::string> python_args = {program(name).string()};
    python_args.insert(python_args.end(), program_args.begin(), program_args.end());
    return run_python(command, std::move(options), python_args);
  }

  // forkcheck COMMAND --quiet --out DIR OPTIONS -- PYTHON PYTHON_ARGS; the report's one variant.
  fc::test_run::Run run_python(const std::string& command, std::vector<std::string> options,
                               const std::vector<std::string>& python_args) {
    std::vector<std::string> args = {command, "--quiet", "--out", dir_.string()};
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), {"--", GetParam().path});
    args.insert(args.end(), python_args.begin(), python_args.end());
    auto r = fc::test_run::forkcheck(args);
    const json report = json::parse(slurp(dir_ / "report.json"), nullptr, false);
    if (report.is_object() && report.contains("cases") && report["cases"].size() == 1)
      v_ = report["cases"][0]["variants"][0];
    // Every report of these programs, Python facts included, holds to the published schema.
    const std::string validate = std::string("/usr/bin/python3 ") + FC_VALIDATE_REPORT + " " +
                                 FC_REPORT_SCHEMA + " " + (dir_ / "report.json").string();
    EXPECT_EQ(std::system(validate.c_str()), 0) << validate;
    return r;
  }

  fs::path dir_;
  json v_;
};

// Python frames of every thread in `stacks` ([{pid, name, python: [{file, line, function}]}]).
bool has_frame(const json& stacks, const fs::path& file, int line, const std::string& function) {
  for (const auto& t : stacks.is_array() ? stacks : json::array())
    for (const auto& f : t.value("python", json::array()))
      if (f.value("file", "") == file.string() && f.value("line", 0) == line &&
          f.value("function", "") == function)
        return true;
  return false;
}

TEST_P(PythonPrograms, AHungPoolWorkersLineComesFromTheProgramWithoutADebugger) {
  // The stall is said about 1.5 s in and its Python stacks asked for then; the hang is called
  // later, and the stall keeps only an answer that came before it. Beside stress -c 4 an answer
  // took over 0.5 s (with --hang-after 2 the stall's stacks were empty): 6 s leaves it room.
  const auto r = run("exec", "hung_pool.py", {"--hang-after", "6", "--timeout", "60"});
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(v_.value("outcome", ""), "hang") << v_.value("message", "");
  const int line = line_of(program("hung_pool.py"), "blocked");
  // At the stall (taken then, the program left running) and in the hang's stacks.
  EXPECT_TRUE(has_frame(v_["stall"]["stacks"], program("hung_pool.py"), line, "work"))
      << v_["stall"].dump(1);
  EXPECT_TRUE(has_frame(v_["stacks"], program("hung_pool.py"), line, "work"))
      << v_["stacks"].dump(1);
  EXPECT_TRUE(contains(v_.value("stacks_python_note", ""), "from the program itself (each thread"))
      << v_.value("stacks_python_note", "");
  // Said while it ran, on forkcheck's stderr: the worker's line.
  EXPECT_TRUE(contains(r.err, "hung_pool.py:" + std::to_string(line) + " in work")) << r.err;
  // The fix names the fork that copied the lock, seen by the bootstrap, not supposed.
  EXPECT_TRUE(
      contains(r.out, "while 1 other thread ran there: \"holder\" (started at hung_pool.py:"))
      << r.out;
  EXPECT_FALSE(contains(r.out, "First put the code that starts them")) << "it has its guard";
  std::fprintf(stderr, "    %s: the stall (and its Python lines) said %.2f s after the start\n",
               GetParam().label.c_str(), v_["stall"].value("after_s", -1.0));
}

// forkcheck's own way of asking for stacks (harness/supervise/python_stacks_ask.h, as the
// supervisor drives it), `asks` times over on `script`: what the asks got, or how it died.
struct Asked {
  std::string died;  // "at ask N (killed by signal S)", empty while it lived
  std::string failure;
  size_t by_main = 0, by_thread = 0, threads_read = 0, thread_signals = 0;
};

Asked ask_again_and_again(const std::string& python, const std::string& script, int asks) {
  using fc::harness::PythonChannel;
  using fc::harness::PythonStacksAsk;
  Asked out;
  std::string why;
  auto channel = PythonChannel::open("ask-test-" + std::to_string(::getpid()), why);
  if (!channel) {
    out.failure = why;
    return out;
  }
  const std::string env_path = std::string("PYTHONPATH=") + FC_PYTHON_BOOTSTRAP;
  const std::string env_channel = "FORKCHECK_PY_CHANNEL=" + channel->address();
  const std::string env_dump =
      "FORKCHECK_PY_SIGNAL=" + std::to_string(PythonChannel::dump_signal());
  const std::string env_stacks =
      "FORKCHECK_PY_STACKS_SIGNAL=" + std::to_string(PythonChannel::stacks_signal());
  const pid_t child = ::fork();
  if (child < 0) {
    out.failure = "fork failed";
    return out;
  }
  if (child == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
    const char* env[] = {env_path.c_str(),   env_channel.c_str(),  env_dump.c_str(),
                         env_stacks.c_str(), "PATH=/usr/bin:/bin", nullptr};
    ::execle(python.c_str(), python.c_str(), script.c_str(), "600", nullptr, env);
    ::_exit(127);
  }
  auto pump = [&](int ms) {
    std::vector<pollfd> fds = {{channel->listen_fd(), POLLIN, 0}};
    for (int fd : channel->connection_fds()) fds.push_back({fd, POLLIN, 0});
    ::poll(fds.data(), fds.size(), ms);
    const auto now = PythonStacksAsk::Clock::now();
    channel->accept_ready(now);
    for (int fd : channel->connection_fds()) channel->read_ready(fd, now);
  };
  // How it ended, when it did: what a death under the asks was (a signal, an exit).
  std::string ended;
  auto alive = [&] {
    int status = 0;
    if (::waitpid(child, &status, WNOHANG) == 0) return true;
    if (ended.empty())
      ended = WIFSIGNALED(status) ? " (killed by signal " + std::to_string(WTERMSIG(status)) + ")"
                                  : " (exited " + std::to_string(WEXITSTATUS(status)) + ")";
    return false;
  };
  // Its hello and its four threads told (the main thread is in the hello).
  for (int i = 0; i < 60000 / 10; ++i) {
    const auto offer = channel->offer(child);
    if (offer && offer->python_tids.size() >= 5) break;
    if (!alive()) {
      out.died = "before its threads were told" + ended;
      return out;
    }
    pump(10);
  }
  if (!channel->offer(child) || channel->offer(child)->python_tids.size() < 5)
    out.failure = "its threads were never told";
  for (int ask_no = 1; ask_no <= asks && out.failure.empty(); ++ask_no) {
    const PythonStacksAsk::Offer offer = *channel->offer(child);
    PythonStacksAsk ask(
        offer, fc::harness::look_for_ask(child, offer, *channel, PythonStacksAsk::Clock::now()));
    while (!ask.done()) {
      const auto look =
          fc::harness::look_for_ask(child, ask.offer(), *channel, PythonStacksAsk::Clock::now());
      const auto act = ask.step(look);
      if (act.kind != PythonStacksAsk::Act::Kind::kNothing) {
        const auto how = fc::harness::send_for_ask(child, act, look);
        out.thread_signals += act.kind == PythonStacksAsk::Act::Kind::kAskThread &&
                              how == PythonStacksAsk::Sent::kSent;
        ask.sent(act, how, look);
      } else {
        pump(5);
      }
    }
    const fc::harness::PyDump dump = fc::harness::dump_of_ask(ask, *channel, child);
    size_t with_frames = 0;
    for (const auto& t : dump.threads) with_frames += t.frames.empty() ? 0 : 1;
    std::string unread;
    for (const auto& u : fc::harness::unread_of_ask(ask, *channel, child)) unread += "\n  " + u;
    if (!alive()) {
      out.died = "at ask " + std::to_string(ask_no) + ended + unread;
      break;
    }
    if (with_frames == 0)
      out.failure = "ask " + std::to_string(ask_no) + " got no stack back" + unread;
    (ask.main_answered() ? out.by_main : out.by_thread) += 1;
    out.threads_read += with_frames;
  }
  int status = 0;
  ::kill(child, SIGKILL);
  ::waitpid(child, &status, 0);
  if (out.died.empty() && !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
    out.failure += " it had ended by itself: status " + std::to_string(status);
  return out;
}

// A program whose five threads never stop running Python code: it never dies of being asked, and
// every ask gets a stack back (from the main thread, which answers for all: the others wake every
// few milliseconds to take the GIL and are never signalled on their own).
TEST_P(PythonPrograms, AskedForItsStacksAHundredTimesABusyProgramNeverDiesAndAlwaysAnswers) {
  const Asked a = ask_again_and_again(GetParam().path, program("busy_threads.py").string(), 100);
  ASSERT_TRUE(a.died.empty()) << "the program died " << a.died;
  ASSERT_TRUE(a.failure.empty()) << a.failure;
  std::fprintf(stderr,
               "    %s: 100 asks answered: %zu by the main thread for every thread, %zu thread by "
               "thread (%zu signals to a thread on its own); %zu thread stacks read in all\n",
               GetParam().label.c_str(), a.by_main, a.by_thread, a.thread_signals, a.threads_read);
}

// A program whose main thread waits in join() (it cannot answer for all) and whose threads sleep
// for short random spells between bursts of Python: they are asked one at a time, only while
// parked in their sleep, and the program never dies of it.
TEST_P(PythonPrograms, AskedForItsStacksTwentyTimesAProgramOfSleepersNeverDiesAndTheyAreRead) {
  const Asked a = ask_again_and_again(GetParam().path, program("sleepy_threads.py").string(), 20);
  ASSERT_TRUE(a.died.empty()) << "the program died " << a.died;
  ASSERT_TRUE(a.failure.empty()) << a.failure;
  // Its main thread answers for all only before it reaches its join(): then thread by thread.
  EXPECT_GT(a.by_thread, 0u);
  EXPECT_GT(a.thread_signals, 0u) << "no thread was asked on its own";
  std::fprintf(stderr,
               "    %s: 20 asks answered: %zu by the main thread, %zu thread by thread (%zu "
               "signals to a thread on its own); %zu thread stacks read in all\n",
               GetParam().label.c_str(), a.by_main, a.by_thread, a.thread_signals, a.threads_read);
}

// The pythonspeed.com "Pool full of sharks" program under exec: a worker stuck on a logging lock
// copied at fork, beside a parent whose threads keep logging. forkcheck asks every process for
// its stacks at the stall and again when it calls the hang: the parent never dies of it, and the
// end is the hang, with the worker's line.
TEST_P(PythonPrograms, APoolFullOfSharksEndsAsAHangWithTheWorkersLineAndTheParentAlive) {
  const auto r = run("exec", "pool_full_of_sharks.py", {"--hang-after", "4", "--timeout", "120"});
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(v_.value("outcome", ""), "hang") << v_.value("message", "");
  EXPECT_FALSE(v_["watchdog"].contains("died_after_look")) << v_["watchdog"].dump(1);
  const int line = line_of(program("pool_full_of_sharks.py"), "blocked");
  EXPECT_TRUE(
      has_frame(v_["stacks"], program("pool_full_of_sharks.py"), line, "runs_in_subprocess"))
      << v_["stacks"].dump(1);
}

// A program that dies when asked for its stacks (its own handler kills it): the death is said to
// follow forkcheck's request, the outcome is forkcheck's error, never the program's crash.
TEST_P(PythonPrograms, ADeathRightAfterForkcheckAskedIsNotCalledTheProgramsCrash) {
  const auto r = run("exec", "dies_when_asked.py", {"--timeout", "3"});
  EXPECT_NE(v_.value("outcome", ""), "crash") << v_.value("message", "");
  EXPECT_EQ(v_.value("outcome", ""), "error") << v_.value("message", "");
  EXPECT_TRUE(v_.value("harness_error", false)) << v_.dump(1);
  EXPECT_TRUE(contains(v_.value("message", ""),
                       "after forkcheck asked its main thread for every thread's stack: "
                       "forkcheck may have caused it"))
      << v_.value("message", "");
  EXPECT_TRUE(contains(r.out + r.err, "forkcheck may have caused it")) << r.out << r.err;
}

TEST_P(PythonPrograms, WatchNamesTheForksLineAndTheThreadBesideIt) {
  const auto r = run("watch", "fork_beside_thread.py");
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  const fs::path p = program("fork_beside_thread.py");
  const std::string fork_at = "fork_beside_thread.py:" + std::to_string(line_of(p, "fork"));
  const std::string thread_at = "fork_beside_thread.py:" + std::to_string(line_of(p, "thread"));
  const json forks = v_["details"]["forks"];
  ASSERT_EQ(forks.size(), 1u) << forks.dump(1);
  EXPECT_EQ(forks[0]["python"].value("site", "").rfind(fork_at + " in <module>", 0), 0u)
      << forks[0]["python"].dump(1);
  const std::string what = forks[0]["hazards"][0].value("what", "");
  EXPECT_TRUE(contains(what, fork_at +
                                 " in <module> forked while 1 other thread was running: "
                                 "\"metrics-flusher\" (started at " +
                                 thread_at))
      << what;
  EXPECT_TRUE(contains(r.out, "\"metrics-flusher\"")) << r.out;
  EXPECT_TRUE(contains(r.out, "  python:  " + fork_at + " in <module> > process.py:")) << r.out;
  // Under its __main__ guard: spawn or forkserver is the fix as it stands.
  EXPECT_TRUE(contains(r.out, "  instead: start the worker with spawn or forkserver")) << r.out;
}

TEST_P(PythonPrograms, WatchNeverAdvisesSpawnAloneToAProgramWithoutAMainGuard) {
  const auto r = run("watch", "fork_beside_thread_unguarded.py");
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  const std::string fork_at =
      "fork_beside_thread_unguarded.py:" +
      std::to_string(line_of(program("fork_beside_thread_unguarded.py"), "fork"));
  EXPECT_TRUE(contains(r.out,
                       "  instead: put the code that starts workers under `if __name__ == "
                       "\"__main__\":` (" +
                           fork_at + " runs at the main script's top level"))
      << r.out;
  const json advice = v_["details"]["forks"][0].value("advice", json::array());
  ASSERT_FALSE(advice.empty()) << v_["details"]["forks"].dump(1);
  EXPECT_TRUE(contains(advice[0].get<std::string>(), "if __name__ == ")) << advice.dump(1);
}

TEST_P(PythonPrograms, ASegfaultInCtypesNamesItsPythonLine) {
  const auto r = run("exec", "ctypes_segfault.py");
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(v_.value("outcome", ""), "crash");
  const int line = line_of(program("ctypes_segfault.py"), "crash");
  EXPECT_TRUE(contains(r.out,
                       "FINDING: exec: crash: killed by SIGSEGV (Segmentation fault) at "
                       "ctypes_segfault.py:" +
                           std::to_string(line) + " in read_null"))
      << r.out;
}

TEST_P(PythonPrograms, ASpawnedWorkersCrashUnderAParentThatExits0IsAFinding) {
  const auto r = run("exec", "spawned_worker_crash.py");
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(v_["exit"].value("code", -1), 0) << v_["exit"].dump();
  const int line = line_of(program("spawned_worker_crash.py"), "crash");
  const std::string told =
      "crasher (__main__.crash) killed by SIGSEGV at spawned_worker_crash.py:" +
      std::to_string(line) + " in crash";
  EXPECT_TRUE(contains(r.out, "the program exited 0, but a process of it failed")) << r.out;
  EXPECT_TRUE(contains(r.out, told)) << r.out;
  const std::string junit = slurp(dir_ / "junit.xml");
  EXPECT_TRUE(contains(junit, "<failure")) << junit;
  EXPECT_TRUE(contains(junit, "killed by SIGSEGV")) << junit;
  EXPECT_TRUE(contains(junit, "type=\"process-failed\"")) << junit;
  // Names CI's history can follow from run to run: the script, the failed process by order.
  EXPECT_TRUE(contains(junit, "classname=\"exec\" name=\"spawned_worker_crash.py\"")) << junit;
  EXPECT_TRUE(contains(junit,
                       "classname=\"exec.spawned_worker_crash.py\" "
                       "name=\"failed-process-1 crasher (__main__.crash)\""))
      << junit;
  const std::string issue = slurp(dir_ / "issue.md");
  EXPECT_TRUE(contains(issue, "### Processes of it that failed")) << issue;
  EXPECT_TRUE(contains(issue, "killed by SIGSEGV at spawned\\_worker\\_crash.py:" +
                                  std::to_string(line) + " in crash"))
      << issue;
}

TEST_P(PythonPrograms, WorkersEndedAsTheProgramAskedDidNotFail) {
  const auto r = run("exec", "ended_on_purpose.py");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // Each end was seen, and seen as asked for.
  int asked = 0;
  for (const auto& p : v_["python"].value("processes", json::array()))
    for (const auto& e : p.value("child_exits", json::array()))
      asked += e.value("asked", std::string()).empty() ? 0 : 1;
  EXPECT_GE(asked, 3) << v_["python"].dump(1);
}

TEST_P(PythonPrograms, AKnownMessageNamesItsCatalogCaseAndFix) {
  const auto r = run("exec", "ancdata_error.py");
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  const int line = line_of(program("ancdata_error.py"), "raise");
  EXPECT_TRUE(contains(r.out, "FINDING: exec: error: ancdata_error.py:" + std::to_string(line) +
                                  " in receive: RuntimeError: received 0 items of ancdata"))
      << r.out;
  const json explained = v_["details"].value("explained_by", json::array());
  ASSERT_EQ(explained.size(), 1u) << v_["details"].dump(1);
  EXPECT_EQ(explained[0].value("case", ""), "fd-passing-exhaustion");
  EXPECT_TRUE(contains(r.out, "(forkcheck list fd-passing-exhaustion)")) << r.out;
}

TEST_P(PythonPrograms, IssueMdsTorchThreadsAreThoseOfTheProgram) {
  if (!has_torch(GetParam().path)) GTEST_SKIP() << GetParam().path << " cannot import torch";
  const auto r = run("exec", "torch_threads.py");
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  // 3: what the program set; a fresh interpreter would say the machine's default.
  const std::string issue = slurp(dir_ / "issue.md");
  EXPECT_TRUE(contains(issue, "- torch threads: 3 intra-op")) << issue;
  EXPECT_TRUE(contains(issue, "(the program itself)")) << issue;
}

std::string label(const ::testing::TestParamInfo<Interpreter>& info) { return info.param.label; }

TEST_P(PythonPrograms, AStuckWorkersFixSaysToAddTheMainGuardBeforeSpawnWhereItIsMissing) {
  const auto r = run("exec", "hung_pool_unguarded.py", {"--hang-after", "3", "--timeout", "60"});
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  const std::string pool = std::to_string(line_of(program("hung_pool_unguarded.py"), "pool"));
  EXPECT_TRUE(contains(r.out, "First put the code that starts them (hung_pool_unguarded.py:" +
                                  pool + ") under if __name__ == \"__main__\":"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "Start the workers with spawn or forkserver")) << r.out;
}

// The script after a public report (matrix_torch_report.py) under exec, fork only: it hangs in
// libgomp, and its worker is defined under the __main__ guard, where spawn would not find it: the
// FIX says to move it first, naming its line (read from the script), then to use spawn.
TEST_P(PythonPrograms, TheLibgompFixSaysFirstToMoveAWorkerDefinedUnderTheGuard) {
  if (!has_torch(GetParam().path)) GTEST_SKIP() << GetParam().path << " cannot import torch";
  const auto r = run("exec", "matrix_torch_report.py", {"--hang-after", "3", "--timeout", "60"});
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(v_.value("outcome", ""), "hang");
  const std::string def = std::to_string(line_of(program("matrix_torch_report.py"), "def"));
  EXPECT_TRUE(contains(r.out,
                       "FIX: a process waits inside libgomp (GNU OpenMP), whose thread pool "
                       "does not survive fork: 'train' (matrix_torch_report.py:" +
                           def + ") is defined under `if __name__ == \"__main__\":`"))
      << r.out;
  EXPECT_TRUE(contains(r.out,
                       "move it to module level, above the __main__ guard; then start the "
                       "workers with spawn or forkserver"))
      << r.out;
}

TEST_P(PythonPrograms, ADataLoaderWorkersSegfaultNamesItsLineThoughTorchHandlesTheSignal) {
  if (!has_torch(GetParam().path)) GTEST_SKIP() << GetParam().path << " cannot import torch";
  const auto r = run("exec", "dataloader_segfault.py", {"--timeout", "120"});
  EXPECT_EQ(r.code, 1) << r.err;
  const int line = line_of(program("dataloader_segfault.py"), "segfault");
  EXPECT_TRUE(contains(r.out, "killed by SIGSEGV at dataloader_segfault.py:" +
                                  std::to_string(line) + " in __getitem__"))
      << r.out;
  // The cause: which worker died, how and where (no rule knows a fix for a native crash).
  // The main process fails with "DataLoader worker (pid(s) N) exited unexpectedly", or, as the
  // worker dies mid-message, a ConnectionResetError: the cause is the worker's death either way.
  const json cause = v_.value("cause", json::object());
  EXPECT_EQ(cause.value("rule", ""), "dataloader-worker-died") << v_.dump(1).substr(0, 3000);
  EXPECT_TRUE(contains(cause.value("cause", ""), "killed by SIGSEGV at dataloader_segfault.py:"))
      << cause.dump();
  EXPECT_FALSE(cause.contains("fix"));
  // Where that line came from: faulthandler, armed again over the DataLoader's handlers (torch
  // 1.13 names the function torch._C's, later ones signal_handling's).
  EXPECT_TRUE(contains(r.out,
                       "(the line from faulthandler's dump, which forkcheck armed again after "
                       "torch."))
      << r.out;
  EXPECT_TRUE(contains(r.out, "._set_worker_signal_handlers had put its own handlers over it)"))
      << r.out;
  // PyTorch's own handler still ran after ours: its line, and the death it chose.
  EXPECT_TRUE(contains(v_.value("stderr", ""),
                       "Unexpected segmentation fault encountered in "
                       "worker"))
      << v_.value("stderr", "");
}

TEST_P(PythonPrograms, ForkchecksLookNeverEndsAProgramsWaitForASignal) {
  // Still in signal.pause() for 4 s: the stall is said and looked at, and the program's wait is
  // ended by its own alarm (set in native code, unseen), not by forkcheck's request for its stacks.
  const auto r = run("exec", "waits_for_native_alarm.py", {"--timeout", "120"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(v_.value("outcome", ""), "ok") << v_.value("message", "");
  EXPECT_TRUE(contains(r.err, "STALLED at")) << r.err;
  EXPECT_TRUE(contains(v_.dump(), "pause() or sigsuspend()")) << v_["stall"].dump(1);
}

TEST_P(PythonPrograms, EndsTheProgramAskedForAreNotItsFailures) {
  // os.kill, Popen.terminate() and kill(), os.killpg of a group a child leads: each signal sent
  // by the program, each end checked by it; the program exits 0, and so does exec.
  const auto r = run("exec", "ends_it_asked_for.py", {"--timeout", "120"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(v_.value("outcome", ""), "ok") << v_.value("message", "");
  EXPECT_FALSE(contains(r.out, "failed")) << r.out;
  // What it sent is in the facts, with where.
  const int line = line_of(program("ends_it_asked_for.py"), "kill");
  bool told = false;
  for (const auto& p : v_["python"]["processes"])
    for (const auto& x : p.value("signals_sent", json::array()))
      told = told || (x.value("signal", 0) == SIGTERM && x["where"].value("line", 0) == line);
  EXPECT_TRUE(told) << v_["python"].dump().substr(0, 3000);
}

// Why each end of a process of `v` was not counted, by its "how" ("killed by SIGSEGV"...).
std::vector<std::string> not_counted_why(const json& v) {
  std::vector<std::string> out;
  for (const auto& e : v["process_ends"]["not_counted"]["list"])
    out.push_back(e.value("how", "") + ": " + e.value("why", ""));
  return out;
}

bool any_contains(const std::vector<std::string>& lines, const std::string& part) {
  for (const auto& l : lines)
    if (contains(l, part)) return true;
  return false;
}

TEST_P(PythonPrograms, ASuiteThatEndsItsChildrenOnPurposeStaysGreenWithTheEndsListed) {
  // Children terminated, killed, signalled, exiting non-zero and raising, a worker crashing a
  // ProcessPoolExecutor, commands exiting non-zero: each checked by the test that caused it.
  const std::string prog = "suite_ends_on_purpose.py";
  const auto r = run("exec", prog, {"--timeout", "300"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(v_.value("outcome", ""), "ok") << v_.value("message", "");
  ASSERT_TRUE(v_.contains("process_ends")) << v_.dump().substr(0, 2000);
  EXPECT_EQ(v_["process_ends"]["failed"].value("count", -1), 0) << v_["process_ends"].dump(1);
  const auto why = not_counted_why(v_);
  const auto at = [&](const char* test) {
    return prog + ":" + std::to_string(line_of(program(prog), test));
  };
  EXPECT_TRUE(
      any_contains(why, "the program read its exit code (Process.exitcode) at " + at("exitcode")))
      << v_["process_ends"].dump(1);
  EXPECT_TRUE(any_contains(
      why, "killed by SIGTERM: ended as the program asked: terminate() at " + at("terminate")))
      << v_["process_ends"].dump(1);
  EXPECT_TRUE(any_contains(why, "killed by SIGTERM: ended by the SIGTERM that pid"))
      << v_["process_ends"].dump(1);
  EXPECT_TRUE(any_contains(why,
                           "killed by SIGSEGV: its end broke the ProcessPoolExecutor, which raised "
                           "BrokenProcessPool to the program"))
      << v_["process_ends"].dump(1);
  EXPECT_TRUE(any_contains(why,
                           "exit status 3: the program read its exit status "
                           "(Popen.returncode) at " +
                               at("returncode")))
      << v_["process_ends"].dump(1);
  EXPECT_TRUE(any_contains(why, "subprocess's call() gave the program its exit status"))
      << v_["process_ends"].dump(1);
  EXPECT_TRUE(any_contains(why, "subprocess's check_call() gave the program its exit status"))
      << v_["process_ends"].dump(1);
  EXPECT_TRUE(contains(r.out, "ends of its processes not counted as failures")) << r.out;
  const std::string issue = slurp(dir_ / "issue.md");
  EXPECT_TRUE(contains(issue, "### Ends not counted as failures")) << issue;
  // Asked to fail for every worker the program did not end itself, the exit codes it only read
  // count.
  fs::remove_all(dir_);
  const auto strict = run("exec", prog, {"--timeout", "300", "--worker-failures", "fail"});
  EXPECT_EQ(strict.code, 1) << strict.out << strict.err;
  EXPECT_GE(v_["process_ends"]["failed"].value("count", 0), 4) << v_["process_ends"].dump(1);
}

TEST_P(PythonPrograms, ATrainerWhoseWorkersDieUnlookedAtFailsUnlessAskedToReport) {
  const auto r = run("exec", "trainer_workers_die.py", {"--timeout", "120"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(v_["exit"].value("code", -1), 0) << v_["exit"].dump();
  EXPECT_EQ(v_["process_ends"]["failed"].value("count", 0), 3) << v_["process_ends"].dump(1);
  const int line = line_of(program("trainer_workers_die.py"), "raise");
  EXPECT_TRUE(contains(r.out, "the program exited 0, but 3 processes of it failed")) << r.out;
  EXPECT_TRUE(contains(r.out,
                       "raised RuntimeError: actor 0 could not run its episode (exit "
                       "status 1) at trainer_workers_die.py:" +
                           std::to_string(line)))
      << r.out;
  fs::remove_all(dir_);
  const auto told =
      run("exec", "trainer_workers_die.py", {"--timeout", "120", "--worker-failures", "report"});
  EXPECT_EQ(told.code, 0) << told.out << told.err;
  EXPECT_EQ(v_["process_ends"]["not_counted"].value("count", 0), 3) << v_["process_ends"].dump(1);
  EXPECT_TRUE(any_contains(not_counted_why(v_), "--worker-failures report"))
      << v_["process_ends"].dump(1);
}

TEST_P(PythonPrograms, AnEndWhoseParentForkcheckCannotSeeIsReportedNotCountedByDefault) {
  const auto r = run("exec", "shell_handles_its_child.py", {"--timeout", "120"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(any_contains(not_counted_why(v_), "raised ValueError: 42: its parent (pid "))
      << v_["process_ends"].dump(1);
  EXPECT_TRUE(any_contains(not_counted_why(v_), "whether it looked at this end cannot be seen"))
      << v_["process_ends"].dump(1);
  fs::remove_all(dir_);
  const auto strict =
      run("exec", "shell_handles_its_child.py", {"--timeout", "120", "--worker-failures", "fail"});
  EXPECT_EQ(strict.code, 1) << strict.out << strict.err;
  EXPECT_EQ(v_["process_ends"]["failed"].value("count", 0), 1) << v_["process_ends"].dump(1);
}

bool has_pytest(const std::string& python) {
  const std::string command = python + " -m pytest --version >/dev/null 2>&1";
  return std::system(command.c_str()) == 0;
}

// pytest, without its cache (nothing written into the source tree), on one file of pytest_suite/,
// rooted there: its test ids would otherwise be relative to the common ancestor of the working
// directory and the file (the source tree's root, where ctest runs in the build tree under it).
std::vector<std::string> pytest_on(const std::string& file) {
  const fs::path suite = fs::path(FC_PYTHON_PROGRAMS) / "pytest_suite";
  return {"-m",
          "pytest",
          "-q",
          "-p",
          "no:cacheprovider",
          "--rootdir",
          suite.string(),
          (suite / file).string()};
}

TEST_P(PythonPrograms, AStalledPytestTestIsNamed) {
  if (!has_pytest(GetParam().path)) GTEST_SKIP() << GetParam().path << " has no pytest";
  const auto r = run_python("exec", {"--hang-after", "3", "--timeout", "120"},
                            pytest_on("test_queue_stall.py"));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(v_.value("outcome", ""), "hang") << v_.value("message", "");
  EXPECT_TRUE(contains(r.out, "\n  in the test test_queue_stall.py::test_join_before_drain (call)"))
      << r.out;
  for (const auto& p : v_["python"]["processes"])
    EXPECT_EQ(p["test"].value("name", ""), "test_queue_stall.py::test_join_before_drain (call)")
        << p.dump().substr(0, 2000);
}

TEST_P(PythonPrograms, AStalledUnittestTestIsNamed) {
  const auto r = run("exec", "unittest_stall.py", {"--hang-after", "3", "--timeout", "120"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(v_.value("outcome", ""), "hang") << v_.value("message", "");
  EXPECT_TRUE(contains(r.out, "\n  in the test __main__.QueueTests.test_join_before_drain\n"))
      << r.out;
}

TEST_P(PythonPrograms, AWorkerThatCrashedUnderPytestIsNamedWithItsTestAndLine) {
  // pytest arms faulthandler with its own stderr, over the bootstrap's: the dump is read there.
  if (!has_pytest(GetParam().path)) GTEST_SKIP() << GetParam().path << " has no pytest";
  const auto r = run_python("exec", {"--timeout", "120"}, pytest_on("test_worker_crash.py"));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(v_["exit"].value("code", -1), 0) << v_["exit"].dump();
  const int line =
      line_of(fs::path(FC_PYTHON_PROGRAMS) / "pytest_suite" / "test_worker_crash.py", "crash");
  EXPECT_TRUE(contains(r.out, "killed by SIGSEGV at test_worker_crash.py:" + std::to_string(line) +
                                  " in crash (the line from the program's own faulthandler's "
                                  "dump in its stderr) during "
                                  "test_worker_crash.py::test_worker_crash (call)"))
      << r.out;
}

// A memory cgroup of `limit_mib` under this process's own (v1: the memory controller's
// hierarchy; v2: the unified one), without swap; "" and why where the machine does not allow it.
fs::path make_memory_cgroup(int limit_mib, std::string& why) {
  std::ifstream in("/proc/self/cgroup");
  std::string line, v1, v2;
  while (std::getline(in, line)) {
    if (line.find(":memory:") != std::string::npos) v1 = line.substr(line.find(":memory:") + 8);
    if (line.rfind("0::", 0) == 0) v2 = line.substr(3);
  }
  const std::string name = "forkcheck-test-" + std::to_string(::getpid());
  const auto write = [](const fs::path& file, const std::string& text) {
    std::ofstream out(file);
    out << text;
    out.flush();
    return static_cast<bool>(out);
  };
  const std::string bytes = std::to_string(static_cast<long long>(limit_mib) * 1024 * 1024);
  if (!v1.empty()) {
    fs::path dir = fs::path("/sys/fs/cgroup/memory" + v1) / name;
    std::error_code ec;
    if (!fs::create_directory(dir, ec) || !write(dir / "memory.limit_in_bytes", bytes)) {
      why = "cannot make a memory cgroup (v1) at " + dir.string() + ": " + ec.message();
      return {};
    }
    write(dir / "memory.swappiness", "0");
    return dir;
  }
  if (!v2.empty()) {
    fs::path dir = fs::path("/sys/fs/cgroup" + v2) / name;
    std::error_code ec;
    if (!fs::create_directory(dir, ec) || !write(dir / "memory.max", bytes)) {
      why = "cannot make a memory cgroup (v2) at " + dir.string() +
            " (the memory controller may not be enabled there): " + ec.message();
      fs::remove(dir, ec);
      return {};
    }
    write(dir / "memory.swap.max", "0");
    return dir;
  }
  why = "this process is in no memory cgroup (/proc/self/cgroup)";
  return {};
}

TEST_P(PythonPrograms, AWorkerTheOomKillerEndedIsToldSoWithItsMemory) {
  if (GetParam().label != "system") GTEST_SKIP() << "run once, on the system's Python";
  std::string why;
  const fs::path cgroup = make_memory_cgroup(160, why);
  if (cgroup.empty()) GTEST_SKIP() << why;
  // forkcheck and the program in the cgroup: the worker, the largest, is the one killed.
  fc::harness::LaunchSpec spec;
  spec.argv = {"/bin/sh",
               "-c",
               "echo $$ > \"$0\"/cgroup.procs && exec \"$@\"",
               cgroup.string(),
               FC_FORKCHECK,
               "exec",
               "--quiet",
               "--out",
               dir_.string(),
               "--",
               GetParam().path,
               program("worker_oom.py").string()};
  spec.timeout_s = 120;
  spec.channel = false;
  const auto r = fc::harness::supervise(spec);
  std::error_code ec;
  fs::remove(cgroup, ec);  // empty once everything in it ended
  const std::string out = r.out.text();
  EXPECT_EQ(r.exit.code, 1) << out << r.err.text();
  const json report = json::parse(slurp(dir_ / "report.json"), nullptr, false);
  ASSERT_TRUE(report.is_object()) << out;
  const json& v = report["cases"][0]["variants"][0];
  EXPECT_EQ(v["exit"].value("code", -1), 0) << v["exit"].dump();
  // The kernel's log names the victim where forkcheck may read it (root, or dmesg_restrict 0);
  // else the cgroup's OOM counter says one was killed there.
  if (v["memory"]["oom"].value("kernel_log_read", false)) {
    EXPECT_TRUE(contains(out,
                         "killed by SIGKILL, sent by the kernel's OOM killer (its memory "
                         "cgroup's limit was reached; its anonymous resident memory then: "))
        << out;
    EXPECT_FALSE(v["memory"]["oom"]["killed"].empty()) << v["memory"].dump(1);
  } else {
    EXPECT_TRUE(contains(out,
                         "killed by SIGKILL (perhaps the kernel's OOM killer: it killed "
                         "processes during the run (1 in memory cgroup "))
        << out;
  }
  EXPECT_TRUE(contains(out, " memory: RSS ")) << out;
  EXPECT_TRUE(contains(slurp(dir_ / "issue.md"), "  - memory: RSS ")) << slurp(dir_ / "issue.md");
}

TEST_P(PythonPrograms, WorkersWhosePrivateMemoryGrowsAfterForkAreToldLive) {
  // About a gigabyte in all: on the system's Python and the newest only.
  if (GetParam().label != "system" && GetParam().label != "pyenv_3_13")
    GTEST_SKIP() << "run on the system's Python and 3.13 only";
  const auto r = run("exec", "cow_refcount_growth.py", {"--timeout", "120"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "forkcheck: MEMORY: the private memory of ")) << r.err;
  EXPECT_TRUE(contains(r.err, "copy-on-write, perhaps")) << r.err;
  EXPECT_TRUE(contains(r.out, "\n  memory: the private memory of 2 processes")) << r.out;
  // Each worker's samples: sharing much and with little of its own when first seen, hundreds of
  // MiB of its own at its peak. (The parent grew too, but from nothing shared.)
  int grown = 0;
  for (const auto& p : v_["memory"]["processes"]) {
    const long long first_private = p["first"].value("private_kib", 0LL);
    const bool grew = p["first"].value("rss_kib", 0LL) - first_private > 64 * 1024 &&
                      first_private < 64 * 1024 && p["peak"].value("private_kib", 0LL) > 200 * 1024;
    grown += grew;
    // Said live, together or each on its own line as each was seen to grow.
    if (grew) {
      EXPECT_TRUE(contains(r.err, std::to_string(p.value("pid", 0)))) << r.err;
    }
  }
  EXPECT_EQ(grown, 2) << v_["memory"].dump(1);
}

TEST_P(PythonPrograms, WhatPassedTheBoundsIsSaidWithTheBound) {
  const auto r = run("exec", "forks_past_the_bound.py", {"--timeout", "120"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(v_["python"]["dropped_by"].value("fork", 0), 51) << v_["python"]["dropped_by"];
  EXPECT_FALSE(v_["python"]["dropped_by"].contains("start_method")) << v_["python"]["dropped_by"];
  // The program's own process: the one exec started (by pid it may come anywhere: pids wrap).
  json chosen, forks;
  for (const auto& p : v_["python"]["processes"])
    if (p.value("born", "") == "exec") {
      chosen = p["start_methods"];
      forks = p["forks"];
    }
  // 300 forks alike, one entry; then one each, to the bound.
  ASSERT_EQ(forks.size(), 200u);
  EXPECT_EQ(forks[0].value("folded", 0), 300) << forks[0];
  EXPECT_EQ(forks[0].value("last_seq", 0) - forks[0].value("seq", 0), 299) << forks[0];
  EXPECT_EQ(forks[0]["stack"].back().value("line", 0),
            line_of(program("forks_past_the_bound.py"), "alike"))
      << forks[0];
  EXPECT_FALSE(forks[1].contains("folded")) << forks[1];
  ASSERT_EQ(chosen.size(), 1u) << chosen;
  EXPECT_EQ(chosen[0].value("count", 0), 250) << chosen;
  EXPECT_EQ(chosen[0]["where"].value("line", 0),
            line_of(program("forks_past_the_bound.py"), "context"));
  EXPECT_TRUE(contains(r.out,
                       "not kept of what the Python side told: 51 forks past the 200 kept "
                       "of a process (2000 of those made beside other threads)"))
      << r.out;
}

// A job script as a user writes one: the lines `forkcheck attach --env` prints, then `RUN python
// SCRIPT` (RUN: "exec", or "exec unshare ..."), started in the test's process group (see
// attach_test.cc's Target) with the bootstrap's code kept under `dir`. Its pid; -1 when the lines
// could not be had.
pid_t start_job_with_env_lines(const std::string& run, const fs::path& python,
                               const fs::path& script, const fs::path& dir) {
  const auto env = fc::test_run::forkcheck(
      {"attach", "--env"}, {{"FORKCHECK_PY_BYTECODE", (dir / "bytecode").string()}});
  EXPECT_EQ(env.code, 0) << env.err;
  EXPECT_TRUE(contains(env.out, "FORKCHECK_PY_ATTACHABLE=")) << env.out;
  if (env.code != 0) return -1;
  const std::string job = env.out + run + " \"$0\" \"$1\"\n";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", job.c_str(), python.c_str(), script.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

// `forkcheck attach PID --hang-after 2 --out OUT` on a program the test started (`pid`, its
// child), then every process of it left running killed: the report's variant (null when none),
// what forkcheck said and how many processes it left running.
json attach_then_end(pid_t pid, const fs::path& out, fc::test_run::Run& r, std::size_t& alive) {
  r = fc::test_run::forkcheck(
      {"attach", std::to_string(pid), "--hang-after", "2", "--out", out.string()});
  const json report = json::parse(slurp(out / "report.json"), nullptr, false);
  json v = report.is_object() ? report["cases"][0]["variants"][0] : json();
  alive = 0;
  if (v.is_object())
    for (const auto& p : v["watchdog"]["attached"]["running_at_end"]) {
      ::kill(p.get<int>(), SIGKILL);
      ++alive;
    }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return v;
}

// forkcheck attach on a hung Python program it did not start (the multiprocessing docs' own
// deadlock): the hang, the wait chain across both processes, and, with no bootstrap in it, Python
// frames read by gdb's py-bt once it is hung; the program runs on.
TEST_P(PythonPrograms, AttachToAHungPythonProgramGivesTheChainAndItsPythonLine) {
  if (GetParam().label != "system") GTEST_SKIP() << "run once, on the system's Python";
  const fs::path script = program("causes/queue_join_before_drain.py");
  const pid_t pid = ::fork();  // in the test's process group: see attach_test.cc's Target
  if (pid == 0) {
    ::execl(GetParam().path.c_str(), GetParam().path.c_str(), script.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::size_t alive = 0;
  fc::test_run::Run r;
  const json v = attach_then_end(pid, dir_, r, alive);
  ASSERT_TRUE(v.is_object()) << r.out << r.err;
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(v.value("outcome", ""), "hang") << v.value("message", "");
  EXPECT_EQ(alive, 2u) << "both left running";
  EXPECT_TRUE(contains(r.out, "a deadlock across 2 processes")) << r.out;
  EXPECT_TRUE(contains(v.value("python_note", ""), "not started by forkcheck"));
  int line = 0;
  for (const auto& t : v["stacks"])
    if (t.value("pid", 0) == pid)
      for (const auto& f : t.value("python", json::array()))
        if (contains(f.value("file", ""), "queue_join_before_drain.py")) line = f.value("line", 0);
  const std::string note = v.value("stacks_python_note", "") + "; " + v.value("stacks_note", "");
  if (line == 0 && (contains(note, "budget") || !contains(note, "py-bt")))
    GTEST_SKIP() << "gdb gave no Python frames here (no CPython gdb extension, or not within its "
                    "budget): "
                 << note;
  EXPECT_EQ(line, line_of(script, "join")) << note;
}

// The same hung program started as a job script would start it with the lines `forkcheck attach
// --env` prints: each Python process, the forked child and its feeder thread included, gives its
// own Python frames when attach asks (nothing stopped, no debugger needed), on every Python; none
// of the bootstrap's own frames shows; the program runs on.
TEST_P(PythonPrograms, AttachReadsTheFramesOfAJobStartedWithItsEnvLines) {
  const fs::path script = program("causes/queue_join_before_drain.py");
  const pid_t pid = start_job_with_env_lines("exec", GetParam().path, script, dir_);
  ASSERT_GT(pid, 0);
  std::size_t alive = 0;
  fc::test_run::Run r;
  const json v = attach_then_end(pid, dir_ / "out", r, alive);
  ASSERT_TRUE(v.is_object()) << r.out << r.err;
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(v.value("outcome", ""), "hang") << v.value("message", "");
  EXPECT_EQ(alive, 2u) << "both left running";
  const std::string note = v.value("stacks_python_note", "");
  EXPECT_TRUE(
      contains(note, "Python frames of 2 of 2 Python processes looked at, from the program itself"))
      << note;
  int join_line = 0;
  bool feeder = false;
  for (const auto& t : v["stacks"]) {
    if (t.value("pid", 0) == pid && t.value("tid", 0) == pid) {
      EXPECT_EQ(t.value("name", ""), "MainThread") << "named, though no thread listed it";
    }
    for (const auto& f : t.value("python", json::array())) {
      const std::string file = f.value("file", "");
      EXPECT_FALSE(contains(file, "forkcheck_boot")) << t.dump();
      if (t.value("pid", 0) == pid && contains(file, "queue_join_before_drain.py"))
        join_line = f.value("line", 0);
      // The child's thread that writes the queue's pipe, named as the child listed it.
      if (t.value("pid", 0) != pid && t.value("name", "") == "QueueFeederThread" &&
          f.value("function", "") == "_feed")
        feeder = true;
    }
  }
  EXPECT_EQ(join_line, line_of(script, "join")) << v["stacks"].dump(1);
  EXPECT_TRUE(feeder) << v["stacks"].dump(1);
}

// The same in a container's pid namespace (unshare --pid): the job's files name it and its
// threads by the namespace's ids (pid 1, thread 2), which attach turns into its own before it
// asks; a thread of the job is asked and named.
TEST_P(PythonPrograms, AttachReadsTheFramesOfAJobInAPidNamespaceOfItsOwn) {
  if (GetParam().label != "system") GTEST_SKIP() << "run once, on the system's Python";
  if (::geteuid() != 0) GTEST_SKIP() << "unshare --pid needs root";
  const fs::path script = dir_ / "namespaced.py";
  fs::create_directories(dir_);
  std::ofstream(script)
      << "import threading\n"
         "never = threading.Event()\n"
         "threading.Thread(target=never.wait, name=\"in-ns\", daemon=True).start()\n"
         "lock = threading.Lock()\n"
         "lock.acquire()\n"
         "lock.acquire()\n";
  const pid_t pid = start_job_with_env_lines("exec unshare --pid --fork --mount-proc",
                                             GetParam().path, script, dir_);
  ASSERT_GT(pid, 0);
  std::size_t alive = 0;
  fc::test_run::Run r;
  const json v = attach_then_end(pid, dir_ / "out", r, alive);
  ASSERT_TRUE(v.is_object()) << r.out << r.err;
  if (contains(r.err + r.out, "unshare failed")) GTEST_SKIP() << "no pid namespace here: " << r.err;
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  bool asked = false;
  for (const auto& t : v["stacks"])
    if (t.value("name", "") == "in-ns" && t.value("tid", 0) != 2)  // ours, not the namespace's
      for (const auto& f : t.value("python", json::array()))
        if (f.value("function", "") == "wait") asked = true;
  EXPECT_TRUE(asked) << v.value("stacks_python_note", "") << v["stacks"].dump(1);
}

// The bootstrap's compiled code is kept in forkcheck's folder and used by the next process (each
// would compile its source, about 20 ms, where Python's own __pycache__ is not written); a copy
// that is not whole is compiled again, and the bootstrap still speaks.
TEST_P(PythonPrograms, TheBootstrapsCompiledCodeIsKeptAndABrokenCopyIsNotUsed) {
  const fs::path cache = dir_ / "bytecode";
  const auto once = [&] {
    fs::remove_all(dir_ / "out");
    const auto r = fc::test_run::forkcheck(
        {"exec", "--quiet", "--out", (dir_ / "out").string(), "--", GetParam().path, "-c", "pass"},
        {{"FORKCHECK_PY_BYTECODE", cache.string()}, {"PYTHONDONTWRITEBYTECODE", "1"}});
    const json report = json::parse(slurp(dir_ / "out" / "report.json"), nullptr, false);
    const json& v = report["cases"][0]["variants"][0];
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_EQ(v["python"]["processes"].size(), 1u) << "the bootstrap spoke";
  };
  const auto kept = [&] {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(cache)) files.push_back(e.path());
    return files;
  };
  once();
  const auto files = kept();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].filename().string().rfind("forkcheck_boot.", 0), 0u) << files[0];
  const auto size = fs::file_size(files[0]);
  EXPECT_GT(size, 1000u);
  // Marshal data, but not code: None, then bytes.
  { std::ofstream(files[0], std::ios::trunc) << "N, and not code"; }
  once();
  EXPECT_EQ(kept().size(), 1u);
  EXPECT_EQ(fs::file_size(files[0]), size) << "written whole again";
}

// Past the bound on Python processes heard at once, those that ended quietly make room: a
// failed worker that comes after 2100 of them is still heard, and fails the run.
TEST_P(PythonPrograms, QuietProcessesMakeRoomPastTheBoundForOneThatFails) {
  if (GetParam().label != "system") GTEST_SKIP() << "run once, on the system's Python";
  const auto r = run("exec", "past_the_process_bound.py", {"--timeout", "300"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_GE(v_["python"].value("quiet_folded", 0), 100) << v_["python"]["bounds"];
  EXPECT_FALSE(v_["python"]["dropped_by"].contains("process")) << v_["python"]["dropped_by"];
  EXPECT_TRUE(contains(r.out, "the last worker's own error")) << r.out;
  EXPECT_TRUE(contains(r.out, "ended quietly (no exception, crash, exit status but 0, fork or"))
      << r.out;
}

TEST_P(PythonPrograms, LinesOfTheWrongShapeOnItsChannelAreDroppedAndTheRunGoesOn) {
  const auto r = run("exec", "garbles_the_channel.py", {"--timeout", "120"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(v_.value("outcome", ""), "ok") << v_.value("message", "");
  EXPECT_TRUE(contains(v_.value("stdout", ""), "garbled")) << v_.value("stdout", "");
  EXPECT_FALSE(contains(r.err, "json.exception")) << r.err;
}

TEST_P(PythonPrograms, AWaitItsOwnAlarmEndsIsASleepNotAHang) {
  // In signal.pause() for 4 s with signal.alarm(4) pending, under --hang-after 2: sleeping until
  // the alarm, never stalled or ended.
  const auto r = run("exec", "waits_for_alarm.py", {"--hang-after", "2", "--timeout", "120"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(v_.value("outcome", ""), "ok") << v_.value("message", "");
  const int line = line_of(program("waits_for_alarm.py"), "alarm");
  EXPECT_TRUE(contains(
      r.err, "waits for its own alarm (SIGALRM, set at waits_for_alarm.py:" + std::to_string(line) +
                 " in <module>), a wait that ends by "
                 "itself within "))
      << r.err;
  EXPECT_FALSE(contains(r.err, "STALLED")) << r.err;
}

TEST_P(PythonPrograms, AnAlarmThatCannotEndTheWaitIsNoSleep) {
  // Set again from its own handler (a heartbeat), or blocked where the wait is: a hang at
  // --hang-after, well before the deadline.
  for (const char* program : {"alarm_heartbeat_deadlock.py", "alarm_blocked_deadlock.py"}) {
    fs::remove_all(dir_);
    run("exec", program, {"--hang-after", "3", "--timeout", "100"});
    EXPECT_EQ(v_.value("outcome", ""), "hang") << program << ": " << v_.value("message", "");
    EXPECT_FALSE(v_["watchdog"].value("deadline_passed", true)) << program;
  }
}

TEST_P(PythonPrograms, ABackOffSleepIsNeverAHangAndADeadlineInItIsATimeout) {
  // Quiet for 3 s at a time, under --hang-after 2: said as sleeping, never stalled or ended.
  auto r = run("exec", "backoff_retry.py", {"--hang-after", "2", "--timeout", "120"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(v_.value("outcome", ""), "ok") << v_.value("message", "");
  EXPECT_TRUE(contains(r.err, "SLEEPING at")) << r.err;
  EXPECT_TRUE(contains(r.err, "sleeps in ")) << r.err;
  EXPECT_FALSE(contains(r.err, "STALLED")) << r.err;
  // Its deadline passing in the middle of a sleep (one of 60 s, begun long before on any
  // machine): a timeout that says when it would have woken.
  fs::remove_all(dir_);
  r = run("exec", "backoff_retry.py", {"--timeout", "5"}, {"1", "60"});
  EXPECT_EQ(v_.value("outcome", ""), "timeout") << v_.value("message", "");
  const std::string message = v_.value("message", "");
  EXPECT_TRUE(contains(message, "asleep when its 5.0 s deadline passed: pid ")) << message;
  EXPECT_TRUE(contains(message, ", a wait that ends by itself ")) << message;
  EXPECT_EQ(v_["watchdog"]["tree"].value("state", ""), "sleeping") << v_["watchdog"].dump(1);
}

INSTANTIATE_TEST_SUITE_P(Each, PythonPrograms, ::testing::ValuesIn(interpreters()), label);

// `forkcheck matrix`: each program under fork, spawn and forkserver, the verdict per method and
// why, on Debian's python3 and pyenv's 3.8, 3.12 and 3.13 (the rest as above, for time).
std::vector<Interpreter> matrix_interpreters() {
  std::vector<Interpreter> some;
  for (const auto& i : interpreters())
    if (i.label == "system" || i.label == "pyenv_3_8" || i.label == "pyenv_3_12" ||
        i.label == "pyenv_3_13")
      some.push_back(i);
  return some;
}

class Matrix : public PythonPrograms {
 protected:
  // The variant of `method` and the finding's lines (stdout from "FINDING:" or "finding:").
  const json& method(const std::string& name) {
    for (const auto& v : report_["cases"][0]["variants"])
      if (v.value("name", "") == name) return v;
    static const json none;
    ADD_FAILURE() << "no variant " << name;
    return none;
  }
  fc::test_run::Run matrix(const std::string& program, std::vector<std::string> options = {}) {
    auto r = run("matrix", program, std::move(options));
    report_ = json::parse(slurp(dir_ / "report.json"), nullptr, false);
    return r;
  }
  json report_;
};

TEST_P(Matrix, ASafeProgramIsSafeUnderEveryMethod) {
  const auto r = matrix("matrix_safe.py");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  for (const char* m : {"fork", "spawn", "forkserver"}) {
    EXPECT_EQ(method(m).value("outcome", ""), "ok") << m;
    EXPECT_EQ(method(m).value("start_method", ""), m);
  }
  EXPECT_TRUE(contains(r.out,
                       "matrix: ok under fork, spawn, forkserver: safe under every start "
                       "method, including Python 3.14's default"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "Python 3.14 made forkserver the default on Linux")) << r.out;
}

TEST_P(Matrix, ALocalFunctionFailsUnderEveryMethodAndIsNamed) {
  const auto r = matrix("matrix_local_function.py");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "matrix: fails under fork, spawn, forkserver")) << r.out;
  EXPECT_TRUE(contains(r.out, "defined inside a function or is a lambda")) << r.out;
  EXPECT_TRUE(
      contains(r.out, "FIX: fork, spawn, forkserver: define the worker function at module level"))
      << r.out;
}

TEST_P(Matrix, AWorkerUnderTheMainGuardFailsUnderSpawnAndForkserverOnly) {
  const auto r = matrix("matrix_worker_under_guard.py");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(method("fork").value("outcome", ""), "ok");
  for (const char* m : {"spawn", "forkserver"}) {
    EXPECT_EQ(method(m)["exit"].value("code", -1), 0) << m << ": the parent exits 0";
  }
  EXPECT_TRUE(contains(r.out, "matrix: fails under spawn, forkserver; ok under fork")) << r.out;
  EXPECT_TRUE(contains(r.out, "'worker' is defined under `if __name__ == \"__main__\":`")) << r.out;
  EXPECT_TRUE(contains(
      r.out, "FIX: spawn, forkserver: move 'worker' to module level, above the __main__ guard"))
      << r.out;
  const std::string junit = slurp(dir_ / "junit.xml");
  EXPECT_TRUE(contains(junit, "classname=\"matrix.matrix_worker_under_guard.py\" name=\"spawn\""))
      << junit;
}

TEST_P(Matrix, AGlobalSetInMainIsMissedBySpawnedWorkers) {
  const auto r = matrix("matrix_global_set_in_main.py");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(method("fork").value("outcome", ""), "ok");
  EXPECT_EQ(method("spawn").value("outcome", ""), "error");
  EXPECT_TRUE(contains(r.out, "ok under fork, but KeyError: 'scale' was raised under spawn"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "FIX: spawn, forkserver: pass what the worker needs as an argument"))
      << r.out;
}

TEST_P(Matrix, NoMainGuardIsNamedAndEndsEarly) {
  const auto r = matrix("matrix_no_main_guard.py", {"--timeout", "60"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(method("fork").value("outcome", ""), "ok");
  EXPECT_TRUE(contains(r.out, "without an `if __name__ == \"__main__\":` guard")) << r.out;
  EXPECT_TRUE(contains(r.out, "FIX: spawn, forkserver: put the code that starts processes under"))
      << r.out;
  // Ended once the same error had repeated, not at the 60 s deadline.
  for (const char* m : {"spawn", "forkserver"}) {
    EXPECT_EQ(method(m).value("outcome", ""), "error") << m;
    EXPECT_TRUE(contains(method(m).value("message", ""), "processes failed at start"))
        << method(m).value("message", "");
  }
}

TEST_P(Matrix, TheProgramsOwnMethodIsNamedAndForcedOnRequest) {
  auto r = matrix("matrix_own_method.py");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  const int line = line_of(program("matrix_own_method.py"), "own");
  const std::string where = "fork at matrix_own_method.py:" + std::to_string(line);
  EXPECT_TRUE(contains(r.out, "the program names its own start method: " + where)) << r.out;
  EXPECT_TRUE(contains(r.out,
                       "where the program names its own start method it ran under that "
                       "one each time"))
      << r.out;
  fs::remove_all(dir_);
  r = matrix("matrix_own_method.py", {"--force-start-method"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, where + " in <module> (overridden there by --force-start-method"))
      << r.out;
}

// The reproduction script after a public report (matrix_torch_report.py): fork hangs in libgomp,
// spawn and forkserver workers fail while the parent exits 0; both fixes are named.
TEST_P(Matrix, ATorchScriptFromAReportHangsUnderForkAndLosesItsWorkerUnderTheOthers) {
  if (!has_torch(GetParam().path)) GTEST_SKIP() << GetParam().path << " cannot import torch";
  const auto r = matrix("matrix_torch_report.py", {"--hang-after", "3", "--timeout", "60"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(method("fork").value("outcome", ""), "hang");
  for (const char* m : {"spawn", "forkserver"}) {
    EXPECT_EQ(method(m)["exit"].value("code", -1), 0) << m;
    EXPECT_TRUE(contains(r.out, std::string(m) + ": the program exited 0, but 2 processes of it "
                                                 "failed"))
        << r.out;
  }
  EXPECT_TRUE(contains(r.out, "FIX: fork: a process waits inside libgomp")) << r.out;
  EXPECT_TRUE(contains(r.out, "; spawn, forkserver: move 'train' to module level")) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Each, Matrix, ::testing::ValuesIn(matrix_interpreters()), label);

TEST(MatrixInput, AProgramWhoseStartMethodCannotBeSetIsAUsageError) {
  const auto r = fc::test_run::forkcheck({"matrix", "--", "/bin/true"});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "matrix: the start method cannot be set for /bin/true")) << r.err;
  const auto bad = fc::test_run::forkcheck({"exec", "--start-method", "vfork", "--", "/bin/true"});
  EXPECT_EQ(bad.code, 2) << bad.err;
  const auto lone = fc::test_run::forkcheck({"exec", "--force-start-method", "--", "/bin/true"});
  EXPECT_EQ(lone.code, 2) << lone.err;
}

}  // namespace

namespace {

// The reproduction programs of known causes (python_programs/causes/, each from a public report
// named in its header, with its fix applied in NAME_fixed.py): under `exec`, the right outcome,
// the rule that knows the shape (reports/known_causes.h) and its FIX; then the fixed program runs
// ok. On Debian's python3 and pyenv's 3.6 and 3.13 (the oldest and newest; the rest for time).
struct CauseProgram {
  const char* program;  // under causes/
  const char* outcome;
  const char* rule;
  const char* fix;  // the FIX line begins so (the line it names follows in some)
};

const CauseProgram kCausePrograms[] = {
    {"queue_join_before_drain", "hang", "queue-joined-before-drained",
     "at queue_join_before_drain.py:"},
    {"queue_put_unpicklable", "hang", "queue-put-unpicklable",
     "put on the queue only what pickle can send"},
    {"pool_task_exits", "hang", "pool-worker-ended-mid-task", "at pool_task_exits.py:"},
    {"broken_process_pool", "error", "broken-process-pool", "at broken_process_pool.py:"},
    {"pool_exception_unpicklable", "hang", "pool-result-handler-died",
     "make the exception the task raises"},
    {"executor_at_import", "hang", "pool-used-during-import", "at executor_at_import_mod.py:11,"},
    {"pool_result_after_with", "hang", "pool-result-after-terminate",
     "at pool_result_after_with.py:21,"},
    {"sigterm_handler_no_exit", "hang", "sigterm-handler-returned",
     "in __main__.on_sigterm (set at"},
    {"local_function_spawn", "error", "local-function-to-worker", "define work at module level"},
    {"lambda_to_pool", "error", "local-function-to-worker",
     "give it a function defined with def at module level instead of the lambda (at "},
    // Known to the catalog by their message (its case's fix, details.explained_by).
    {"spawn_without_main_guard", "error", "case:global-config-spawn",
     "a spawned worker re-imports the main module"},
    {"worker_under_main_guard", "error", "case:global-config-spawn",
     "a spawned worker re-imports the main module as __mp_main__"},
};

void PrintTo(const CauseProgram& p, std::ostream* os) { *os << "causes/" << p.program << ".py"; }

std::vector<std::tuple<Interpreter, CauseProgram>> cause_runs() {
  std::vector<std::tuple<Interpreter, CauseProgram>> runs;
  for (const auto& i : interpreters())
    if (i.label == "system" || i.label == "pyenv_3_6" || i.label == "pyenv_3_13")
      for (const auto& p : kCausePrograms) runs.emplace_back(i, p);
  return runs;
}

class KnownCauses : public ::testing::TestWithParam<std::tuple<Interpreter, CauseProgram>> {
 protected:
  void SetUp() override {
    if (python().empty()) GTEST_SKIP() << std::get<0>(GetParam()).reason;
    dir_ = fs::temp_directory_path() /
           ("forkcheck-causes-" + std::string(std::get<1>(GetParam()).program) + "-" +
            std::get<0>(GetParam()).label + "-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }
  const std::string& python() const { return std::get<0>(GetParam()).path; }
  // forkcheck exec on causes/NAME.py; its report's one variant, and its issue.md.
  fc::test_run::Run exec(const std::string& name, json& v, std::string& issue) {
    const fs::path out = dir_ / name;
    auto r = fc::test_run::forkcheck(
        {"exec", "--quiet", "--out", out.string(), "--timeout", "60", "--hang-after", "2", "--",
         python(), (fs::path(FC_PYTHON_PROGRAMS) / "causes" / (name + ".py")).string()});
    const json report = json::parse(slurp(out / "report.json"), nullptr, false);
    if (report.is_object() && report.contains("cases")) v = report["cases"][0]["variants"][0];
    issue = slurp(out / "issue.md");
    return r;
  }
  fs::path dir_;
};

TEST_P(KnownCauses, TheCauseAndItsFixAreFoundAndTheFixedProgramRunsOk) {
  const CauseProgram& p = std::get<1>(GetParam());
  json v;
  std::string issue;
  auto r = exec(p.program, v, issue);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(v.value("outcome", ""), p.outcome) << v.value("message", "");
  const std::string rule = p.rule;
  if (rule.rfind("case:", 0) == 0) {
    // A message the catalog knows: its case, and its fix as the FIX line.
    const json explained = v["details"].value("explained_by", json::array());
    ASSERT_FALSE(explained.empty()) << v.dump(1).substr(0, 4000);
    EXPECT_EQ("case:" + explained[0].value("case", ""), rule);
    EXPECT_TRUE(contains(r.out, std::string("FIX: ") + p.fix)) << r.out;
  } else {
    const json cause = v.value("cause", json::object());
    EXPECT_EQ(cause.value("rule", ""), rule) << v.dump(1).substr(0, 4000);
    const std::string fix = cause.value("fix", "");
    EXPECT_FALSE(fix.empty()) << cause.dump(1);
    EXPECT_EQ(fix.rfind(p.fix, 0), 0u) << fix;
    // The finding says it, in the terminal and in issue.md (Markdown: '#' and '_' escaped).
    EXPECT_TRUE(contains(r.out, "why: " + cause.value("cause", ""))) << r.out;
    EXPECT_TRUE(contains(r.out, "FIX: " + fix)) << r.out;
    const std::string source = cause.value("source", "-");
    EXPECT_TRUE(contains(issue, source.substr(0, source.find_first_of("#_")))) << issue;
  }
  EXPECT_TRUE(contains(issue, "**Fix:** ")) << issue;
  // The fix applied (NAME_fixed.py): ok, with nothing to explain.
  r = exec(std::string(p.program) + "_fixed", v, issue);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(v.value("outcome", ""), "ok") << v.value("message", "");
  EXPECT_FALSE(v.contains("cause"));
}

std::string cause_label(
    const ::testing::TestParamInfo<std::tuple<Interpreter, CauseProgram>>& info) {
  return std::string(std::get<1>(info.param).program) + "_" + std::get<0>(info.param).label;
}

INSTANTIATE_TEST_SUITE_P(Each, KnownCauses, ::testing::ValuesIn(cause_runs()), cause_label);

// Near misses (python_programs/causes/near_miss/, written here to break the rules): a shape that
// looks like a rule's but is not gets no cause, or one without a FIX; a wait that others can
// still end is never a proven deadlock. Debian's python3 only, for time.
TEST(KnownCausesNearMisses, NoRuleClaimsWhatTheRunDidNotShow) {
  const std::string python = "/usr/bin/python3";
  if (::access(python.c_str(), X_OK) != 0) GTEST_SKIP() << "no " << python;
  const fs::path dir =
      fs::temp_directory_path() / ("forkcheck-near-miss-" + std::to_string(::getpid()));
  auto exec = [&](const std::string& name, std::vector<std::string> options) {
    const fs::path out = dir / name;
    std::vector<std::string> args = {"exec", "--quiet", "--out", out.string()};
    args.insert(args.end(), options.begin(), options.end());
    args.insert(
        args.end(),
        {"--", python,
         (fs::path(FC_PYTHON_PROGRAMS) / "causes" / "near_miss" / (name + ".py")).string()});
    fc::test_run::forkcheck(args);
    const json report = json::parse(slurp(out / "report.json"), nullptr, false);
    return report.is_object() && report.contains("cases") ? report["cases"][0]["variants"][0]
                                                          : json::object();
  };
  const std::vector<std::string> hang = {"--timeout", "60", "--hang-after", "2"};
  json v = exec("queue_joins_another", hang);
  EXPECT_NE(v.value("cause", json::object()).value("rule", ""), "queue-joined-before-drained")
      << v.value("cause", json::object()).dump();
  v = exec("two_pools", hang);
  EXPECT_EQ(v.value("cause", json::object()).value("fix", ""), "")
      << v.value("cause", json()).dump();
  v = exec("unpicklable_nobody_waits", hang);
  EXPECT_FALSE(v.contains("cause")) << v.value("cause", json()).dump();
  v = exec("broken_pool_other_failure", {"--timeout", "60"});
  const json cause = v.value("cause", json::object());
  EXPECT_EQ(cause.value("rule", ""), "broken-process-pool") << cause.dump();
  EXPECT_TRUE(contains(cause.value("cause", ""), "_process_worker")) << cause.dump();
  EXPECT_FALSE(cause.contains("fix")) << cause.dump();
  // Asleep in an 8 s step when a 4 s deadline passes: a timeout, with no cause and no cycle.
  v = exec("sigterm_flag_ends_later", {"--timeout", "4"});
  EXPECT_EQ(v.value("outcome", ""), "timeout") << v.value("message", "");
  EXPECT_FALSE(v.contains("cause")) << v.value("cause", json()).dump();
  v = exec("event_set_later", {"--timeout", "4"});
  EXPECT_NE(v["wait_chain"].value("end", ""), "cycle") << v["wait_chain"].dump();
  EXPECT_FALSE(v["wait_chain"].value("proven", true)) << v["wait_chain"].dump();
  // Each reads what the other would write, but the parent's alarm (set in native code, unseen
  // by the bootstrap) will write: not proven.
  v = exec("alarm_ends_cycle", hang);
  ASSERT_TRUE(v.contains("wait_chain")) << v.dump().substr(0, 3000);
  EXPECT_FALSE(v["wait_chain"].value("proven", true)) << v["wait_chain"].dump();
  EXPECT_TRUE(contains(v["wait_chain"].value("unproven", ""), "timer")) << v["wait_chain"].dump();
  if (!HasFailure()) fs::remove_all(dir);
}

// Every rule of the table has its program here, run above (the DataLoader's, which needs torch,
// by PythonPrograms), and its fixed sibling.
TEST(KnownCausesTable, EveryRuleHasItsProgramAndItsFixHereAndIsRun) {
  for (const auto& rule : fc::reports::cause_rules()) {
    const fs::path program = fs::path(FC_PYTHON_PROGRAMS) / "causes" / rule.program;
    EXPECT_TRUE(fs::exists(program)) << rule.id << ": " << program;
    const std::string stem = program.stem().string();
    bool run = stem == "dataloader_segfault";
    for (const auto& p : kCausePrograms)
      run = run || (stem == p.program && std::string(p.rule) == rule.id);
    EXPECT_TRUE(run) << rule.id << " has no run in kCausePrograms";
    if (stem != "dataloader_segfault") {
      EXPECT_TRUE(fs::exists(program.parent_path() / (stem + "_fixed.py"))) << rule.id;
    }
  }
}

}  // namespace
