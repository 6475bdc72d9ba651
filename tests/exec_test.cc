// `forkcheck exec` end to end, on the four programs of issue 5 (tests/programs/fault_child): a
// deadlock on two mutexes is a hang whose stacks name the function each thread is stuck in, in
// every report format; a segfault is a crash that names SIGSEGV and says whether a core was
// dumped, as the kernel decided; a non-zero exit with a message is an error carrying the tail of
// stderr; a program that is slow but fine is ok, and nothing took its stacks. And what any run
// must do: show a child's control bytes escaped on the terminal, and start by removing the
// files an earlier run left, so a run cut short leaves no older verdict beside its log.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/supervise/supervisor.h"
#include "launch/boost_process_v1.h"
#include "read_text.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using fc::test_text::contains;
using fc::test_text::slurp;

class Exec : public ::testing::Test {
 protected:
  // Each test in a directory of its own, which is also the working directory: a core file the
  // kernel may write for the segfault lands there and goes with it.
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("forkcheck-exec-test-" + std::string(info->name()) + "-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    old_cwd_ = fs::current_path();
    fs::current_path(dir_);
    out_ = dir_ / "report";
  }
  void TearDown() override {
    fs::current_path(old_cwd_);
    if (!HasFailure()) fs::remove_all(dir_);  // kept for a look when something failed
  }

  // forkcheck exec [options] -- fault_child ARGS...; reads report.json into report_ and the
  // single variant into v_. Returns forkcheck's exit code.
  int exec(const std::vector<std::string>& options, const std::vector<std::string>& child) {
    fc::harness::LaunchSpec spec;
    spec.argv = {FC_FORKCHECK, "exec", "--out", out_.string()};
    spec.argv.insert(spec.argv.end(), options.begin(), options.end());
    spec.argv.push_back("--");
    spec.argv.push_back(FC_FAULT_CHILD);
    spec.argv.insert(spec.argv.end(), child.begin(), child.end());
    spec.timeout_s = 120;
    spec.channel = false;
    auto r = fc::harness::supervise(spec);
    stdout_ = r.out.text();
    stderr_ = r.err.text();
    report_ = json::parse(slurp(out_ / "report.json"), nullptr, false);
    if (report_.is_object() && report_["cases"].size() == 1 &&
        report_["cases"][0]["variants"].size() == 1)
      v_ = report_["cases"][0]["variants"][0];
    return r.exit.code;
  }

  fs::path dir_, old_cwd_, out_;
  std::string stdout_, stderr_;
  json report_, v_;
};

// The frames of each thread that has a frame naming `function`: (pid, tid) of each.
std::vector<std::pair<int, int>> threads_in(const json& stacks, const std::string& function) {
  std::vector<std::pair<int, int>> found;
  for (const auto& t : stacks) {
    for (const auto& f : t["frames"]) {
      if (contains(f.get<std::string>(), function)) {
        found.emplace_back(t["pid"].get<int>(), t["tid"].get<int>());
        break;
      }
    }
  }
  return found;
}

TEST_F(Exec, DeadlockIsAHangWhoseStacksNameBothStuckFunctions) {
  const int code = exec({"--timeout", "2"}, {"deadlock"});
  EXPECT_EQ(code, 1) << stdout_ << stderr_;
  ASSERT_TRUE(v_.is_object()) << stdout_ << stderr_;
  EXPECT_EQ(v_["outcome"], "hang") << v_["message"];
  EXPECT_TRUE(v_["watchdog"]["deadline_passed"].get<bool>());
  EXPECT_TRUE(contains(v_["message"].get<std::string>(), "2.0 s deadline")) << v_["message"];
  const std::string method = v_.value("stacks_method", "");
  if (method == "proc" && fc::bp::search_path("eu-stack").empty() &&
      fc::bp::search_path("gdb").empty())
    GTEST_SKIP() << "neither eu-stack nor gdb is installed: /proc gives no function names "
                    "(ci/install-deps-debian.sh installs both)";
  ASSERT_TRUE(method == "eu-stack" || method == "gdb")
      << method << ": " << v_.value("stacks_note", "");

  // Three threads: main joining, and one in each locking function, each the only one there.
  const auto a = threads_in(v_["stacks"], "lock_a_then_b");
  const auto b = threads_in(v_["stacks"], "lock_b_then_a");
  ASSERT_EQ(a.size(), 1u) << v_["stacks"].dump(1);
  ASSERT_EQ(b.size(), 1u) << v_["stacks"].dump(1);
  EXPECT_EQ(a[0].first, b[0].first) << "one process";
  EXPECT_NE(a[0].second, b[0].second) << "two different threads";
  EXPECT_EQ(v_["stacks"].size(), 3u) << v_["stacks"].dump(1);

  // Every report format names both functions.
  for (const char* file : {"report.html", "summary.md", "junit.xml"}) {
    const std::string text = slurp(out_ / file);
    EXPECT_TRUE(contains(text, "lock_a_then_b")) << file;
    EXPECT_TRUE(contains(text, "lock_b_then_a")) << file;
  }
}

// A process stuck on a lock only it could release, beside a parent that computes: the Fix names
// the catalog case whose failure shows that wait, from the case's own `shows_as`, not from a
// table in reports/.
TEST_F(Exec, AStuckProcessPointsToTheCaseWhoseFailureShowsTheSameWait) {
  const int code = exec({"--timeout", "6"}, {"stuck-child-busy"});
  EXPECT_EQ(code, 1) << stdout_ << stderr_;
  ASSERT_TRUE(v_.is_object()) << stdout_ << stderr_;
  ASSERT_TRUE(v_["watchdog"].contains("stuck")) << v_.dump(1);
  EXPECT_EQ(v_["watchdog"]["stuck"].value("threads", 0), 1);
  EXPECT_EQ(v_["details"].value("stuck_shown_by", ""), "lock-held-at-fork") << v_["details"];
  const std::string issue = slurp(out_ / "issue.md");
  EXPECT_TRUE(contains(issue, "fork before any thread starts (forkcheck list lock-held-at-fork)"))
      << issue;
}

// How the kernel ends `fault_child ARGS...` run directly by this process: the wait status that
// tells whether this system dumps a core for it (ulimit -c, core_pattern).
int direct_wait_status(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {FC_FAULT_CHILD};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execv(cargv[0], cargv.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  return status;
}

TEST_F(Exec, SegfaultIsACrashNamingTheSignalAndWhetherACoreWasDumped) {
  const std::string last_words = "fault_child: writing through a null pointer now";
  const int code = exec({"--timeout", "30"}, {"segfault", last_words});
  EXPECT_EQ(code, 1) << stdout_ << stderr_;
  ASSERT_TRUE(v_.is_object()) << stdout_ << stderr_;
  EXPECT_EQ(v_["outcome"], "crash") << v_["message"];
  const json& e = v_["exit"];
  EXPECT_EQ(e["signal"], SIGSEGV);
  EXPECT_EQ(e["signal_name"], "SIGSEGV");
  EXPECT_TRUE(e["code"].is_null());
  ASSERT_TRUE(e.contains("core_dumped") && e["core_dumped"].is_boolean()) << e;
  const bool dumped = e["core_dumped"].get<bool>();
  const std::string message = v_["message"].get<std::string>();
  EXPECT_TRUE(contains(message, "SIGSEGV")) << message;
  EXPECT_EQ(contains(message, "core dumped"), dumped) << message;
  EXPECT_TRUE(contains(message, last_words)) << "the last output before the crash: " << message;
  EXPECT_FALSE(v_["watchdog"]["deadline_passed"].get<bool>());
  EXPECT_TRUE(v_["stacks"].empty()) << "no stacks of a process that crashed";

  // The same program, run here: the system makes the same decision about its core.
  const int status = direct_wait_status({"segfault", last_words});
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGSEGV);
  EXPECT_EQ(static_cast<bool>(WCOREDUMP(status)), dumped)
      << "report.json says core_dumped=" << dumped << ", the wait status says otherwise";

  for (const char* file : {"report.html", "summary.md", "junit.xml"})
    EXPECT_TRUE(contains(slurp(out_ / file), "SIGSEGV")) << file;
}

TEST_F(Exec, NonZeroExitIsAnErrorWithTheTailOfStderr) {
  const std::string why = "RuntimeError: DataLoader worker (pid 4242) exited unexpectedly";
  const int code = exec({"--timeout", "30"}, {"exit-message", "3", why});
  EXPECT_EQ(code, 1) << stdout_ << stderr_;
  ASSERT_TRUE(v_.is_object()) << stdout_ << stderr_;
  EXPECT_EQ(v_["outcome"], "error") << v_["message"];
  EXPECT_EQ(v_["exit"]["code"], 3);
  EXPECT_TRUE(v_["exit"]["signal"].is_null());
  const std::string message = v_["message"].get<std::string>();
  EXPECT_TRUE(contains(message, why)) << message;
  EXPECT_TRUE(contains(message, "step 2 of 2 failed")) << "the lines before it too: " << message;
  EXPECT_TRUE(contains(message, "exit status 3")) << message;
  EXPECT_FALSE(contains(message, "working")) << "stdout is not stderr: " << message;
  EXPECT_TRUE(contains(v_["stderr"].get<std::string>(), why));
  EXPECT_TRUE(v_["stacks"].empty());
  for (const char* file : {"report.html", "summary.md", "junit.xml"})
    EXPECT_TRUE(contains(slurp(out_ / file), "DataLoader worker (pid 4242) exited unexpectedly"))
        << file;
}

// A user's program's report starts no repro program: the machine's facts come from forkcheck
// itself, and a message the catalog knows is named from the signs compiled into forkcheck. Here
// the repro programs' folder is empty: neither could be started.
TEST_F(Exec, NoReproProgramIsStartedYetAKnownMessageIsNamed) {
  const fs::path empty = dir_ / "no-repro-programs";
  fs::create_directories(empty);
  const std::string why =
      "RuntimeError: Unable to handle autograd's threading in combination with fork-based "
      "multiprocessing. See https://github.com/pytorch/pytorch/wiki/Autograd-and-Fork";
  fc::harness::LaunchSpec spec;
  spec.argv = {FC_FORKCHECK,   "exec", "--out", out_.string(), "--", FC_FAULT_CHILD,
               "exit-message", "1",    why};
  spec.env = {{"FORKCHECK_REPRO_DIR", empty.string()}};
  spec.timeout_s = 120;
  spec.channel = false;
  const auto r = fc::harness::supervise(spec);
  EXPECT_EQ(r.exit.code, 1) << r.out.text() << r.err.text();
  const json report = json::parse(slurp(out_ / "report.json"), nullptr, false);
  ASSERT_TRUE(report.is_object()) << r.err.text();
  const json& env = report["run"]["environment"];
  EXPECT_FALSE(env.contains("error")) << env.dump();
  EXPECT_EQ(env["collected_by"]["program"], FC_FORKCHECK) << env.dump();
  EXPECT_EQ(env["collected_by"]["user_program"], true);
  EXPECT_TRUE(contains(slurp(out_ / "issue.md"), "- collected by: forkcheck itself ("))
      << slurp(out_ / "issue.md");
  for (const char* key : {"os", "libc", "cpus", "start_methods"})
    EXPECT_TRUE(env.contains(key)) << key << ": " << env.dump();
  // What a repro program loads is not the user's program's: not said of it.
  for (const char* key : {"compiler", "libraries", "openmp_runtimes", "threads", "cuda"})
    EXPECT_FALSE(env.contains(key)) << key << ": " << env.dump();
  const json& v = report["cases"][0]["variants"][0];
  ASSERT_TRUE(v["details"]["explained_by"].is_array()) << v.dump();
  ASSERT_EQ(v["details"]["explained_by"].size(), 1u) << v.dump();
  EXPECT_EQ(v["details"]["explained_by"][0]["case"], "autograd-after-fork");
  EXPECT_TRUE(contains(r.out.text(), "forkcheck list autograd-after-fork")) << r.out.text();
}

TEST_F(Exec, SlowButFineIsOkAndNobodyTookItsStacks) {
  // About 3 s of busy work alternating with futex waits, under a deadline far above that.
  const int code = exec({"--timeout", "30"}, {"slow-fine", "3"});
  EXPECT_EQ(code, 0) << stdout_ << stderr_;
  ASSERT_TRUE(v_.is_object()) << stdout_ << stderr_;
  EXPECT_EQ(v_["outcome"], "ok") << v_["message"];
  EXPECT_EQ(v_["exit"]["code"], 0);
  EXPECT_GE(v_["duration_s"].get<double>(), 2.5) << "it did run its course";
  EXPECT_FALSE(v_["watchdog"]["deadline_passed"].get<bool>());
  EXPECT_FALSE(v_["watchdog"]["sigterm"].get<bool>());
  EXPECT_FALSE(v_.contains("hang"));
  EXPECT_TRUE(v_["stacks"].empty()) << v_["stacks"].dump(1);
  EXPECT_FALSE(v_.contains("stacks_method")) << v_.value("stacks_method", "");
  EXPECT_TRUE(contains(v_["stdout"].get<std::string>(), "slow but fine: done"));
  EXPECT_EQ(report_["summary"]["harness_failures"], 0);
}

TEST_F(Exec, ControlBytesTheChildPrintedAreShownEscaped) {
  // fault_child control-bytes: "abc\0def\n\x1b[31mred\xc2\x9b1m\n" on stderr, exit 3.
  const int code = exec({"--timeout", "30"}, {"control-bytes", "3"});
  EXPECT_EQ(code, 1) << stdout_ << stderr_;
  ASSERT_TRUE(v_.is_object()) << stdout_ << stderr_;
  EXPECT_EQ(v_["outcome"], "error") << v_["message"];
  EXPECT_EQ(v_["exit"]["code"], 3);
  EXPECT_TRUE(contains(v_["stderr"].get<std::string>(), std::string("abc\0def", 7)))
      << "report.json keeps what the child wrote";
  // On the terminal (forkcheck's stdout): the message under the program's line and the closing
  // finding, each with the text after the NUL.
  const std::string escaped = "abc\\0def";
  size_t shown = 0;
  for (size_t at = stdout_.find(escaped); at != std::string::npos;
       at = stdout_.find(escaped, at + 1))
    ++shown;
  EXPECT_EQ(shown, 2u) << stdout_;
  EXPECT_TRUE(contains(stdout_, "\\x1b[31mred\\xc2\\x9b1m")) << stdout_;
  EXPECT_EQ(stdout_.find('\x1b'), std::string::npos) << "a raw ESC reached the terminal";
  EXPECT_EQ(stdout_.find('\0'), std::string::npos) << "a raw NUL reached the terminal";
  EXPECT_EQ(stdout_.find("\xc2\x9b"), std::string::npos) << "a raw C1 CSI reached the terminal";
}

TEST_F(Exec, ARunCutShortLeavesNoEarlierRunsReports) {
  // An earlier run's files, a temporary a killed writer left, and a file of the user's.
  fs::create_directories(out_);
  const std::vector<std::string> earlier = {"run.jsonl", "report.json", "report.html",
                                            "junit.xml", "summary.md",  "report.json.tmp.1.0"};
  for (const auto& f : earlier) std::ofstream(out_ / f) << "earlier run\n";
  std::ofstream(out_ / "notes.txt") << "mine\n";

  // forkcheck exec of a long sleep, killed (SIGKILL: no chance to write a report) once its run
  // log has the case in it.
  const std::string out = out_.string();
  std::vector<const char*> argv = {FC_FORKCHECK,   "exec",  "--out", out.c_str(), "--",
                                   FC_FAULT_CHILD, "sleep", "60",    nullptr};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execv(argv[0], const_cast<char* const*>(argv.data()));
    ::_exit(127);
  }
  ASSERT_GT(pid, 0);
  bool started = false;
  for (int i = 0; i < 600 && !started; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    started = contains(slurp(out_ / "run.jsonl"), "\"type\":\"case\"");
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(started) << "the run never logged its case";

  EXPECT_FALSE(contains(slurp(out_ / "run.jsonl"), "earlier run"));
  for (const auto& f : earlier) {
    if (f == "run.jsonl") continue;  // this run's now
    EXPECT_FALSE(fs::exists(out_ / f)) << f << ": an earlier run's, still there";
  }
  EXPECT_EQ(slurp(out_ / "notes.txt"), "mine\n") << "not a file a run writes";
}

// Before the run really starts (here: while `run` asks a repro program for the environment), the
// folder's earlier reports are left as they were: a forkcheck killed then leaves them, not an
// empty folder. (exec, watch and matrix start nothing before their run: the window is `run`'s.)
TEST_F(Exec, EarlierReportsStayUntilTheRunReallyStarts) {
  fs::create_directories(out_);
  const std::vector<std::string> earlier = {"run.jsonl", "report.json", "report.html", "junit.xml",
                                            "summary.md"};
  for (const auto& f : earlier) std::ofstream(out_ / f) << "earlier run\n";
  // Repro programs that list the native catalog, and whose environment probe takes its time and
  // says when it has begun.
  const fs::path repro = dir_ / "repro", marker = dir_ / "probing";
  const fs::path native = fs::path(FC_FORKCHECK).parent_path() / "forkcheck-repro";
  fs::create_directories(repro);
  for (const char* name : {"forkcheck-repro", "forkcheck-repro-torch"}) {
    std::ofstream(repro / name) << "#!/bin/sh\n"
                                << "if [ \"$1\" = --list ]; then\n"
                                << (std::string(name) == "forkcheck-repro"
                                        ? "  exec '" + native.string() + "' --list\n"
                                        : std::string("  echo '{\"cases\":[]}'; exit 0\n"))
                                << "fi\necho $$ > '" << marker.string() << ".tmp' && mv '"
                                << marker.string() << ".tmp' '" << marker.string()
                                << "'\nexec sleep 30\n";
    fs::permissions(repro / name, fs::perms::owner_all);
  }
  const std::string out = out_.string(), env = "FORKCHECK_REPRO_DIR=" + repro.string();
  std::vector<const char*> argv = {FC_FORKCHECK, "run",   "gomp-fork-hang", "--only",
                                   "spawn",      "--out", out.c_str(),      nullptr};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::putenv(const_cast<char*>(env.c_str()));
    ::execv(argv[0], const_cast<char* const*>(argv.data()));
    ::_exit(127);
  }
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 600 && !fs::exists(marker); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(fs::exists(marker)) << "the environment probe never ran";
  // forkcheck's guardian ends the probe soon after forkcheck died; ended here at once, so that
  // nothing of the test is left when it returns.
  if (const pid_t probe = std::atoi(slurp(marker).c_str()); probe > 0) ::kill(probe, SIGKILL);
  for (const auto& f : earlier) EXPECT_EQ(slurp(out_ / f), "earlier run\n") << f;
}

// A command that does not exist is bad input: one line, exit status 2, nothing in the folder
// touched.
TEST_F(Exec, CommandThatDoesNotExistIsAUsageErrorAndTouchesNothing) {
  fs::create_directories(out_);
  std::ofstream(out_ / "report.json") << "earlier run\n";
  for (const std::string command : {"/nonexistent/forkcheck-x", "no-such-command-forkcheck-x"}) {
    SCOPED_TRACE(command);
    fc::harness::LaunchSpec spec;
    spec.argv = {FC_FORKCHECK, "exec", "--out", out_.string(), "--", command};
    spec.timeout_s = 60;
    spec.channel = false;
    auto r = fc::harness::supervise(spec);
    const std::string err = r.err.text();
    EXPECT_EQ(r.exit.code, 2) << err;
    EXPECT_TRUE(contains(err, "forkcheck: error: exec: ")) << err;
    EXPECT_TRUE(contains(err, command)) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_EQ(slurp(out_ / "report.json"), "earlier run\n");
    EXPECT_FALSE(fs::exists(out_ / "run.jsonl"));
  }
}

// A program that is there but that the OS refuses to start (execve fails): a corrupt binary, a
// script whose #! interpreter is missing, a file without execute permission. Not the user's typo:
// a harness error with a complete report saying why exec failed, exit status 1, the folder's
// earlier reports replaced by this run's.
TEST_F(Exec, ProgramTheOsRefusesToStartIsAHarnessErrorWithACompleteReport) {
  const fs::path random_bytes = dir_ / "random-bytes", corrupt_elf = dir_ / "corrupt-elf",
                 no_interpreter = dir_ / "no-interpreter", not_executable = dir_ / "not-executable";
  {
    std::ofstream f(random_bytes, std::ios::binary);
    unsigned x = 12345;
    for (int i = 0; i < 4096; ++i) f.put(static_cast<char>((x = x * 1103515245u + 12345u) >> 24));
  }
  const std::string elf_magic = {'\x7f', 'E', 'L', 'F', 2, 1, 1};  // 64-bit, little-endian
  std::ofstream(corrupt_elf, std::ios::binary) << elf_magic << std::string(200, '\xff');
  std::ofstream(no_interpreter) << "#!/nonexistent/python9\nprint(1)\n";
  std::ofstream(not_executable) << "#!/bin/sh\necho hello\n";
  for (const auto& p : {random_bytes, corrupt_elf, no_interpreter})
    fs::permissions(p, fs::perms::owner_all);
  fs::permissions(not_executable, fs::perms::owner_read | fs::perms::owner_write);
  const std::vector<std::pair<fs::path, std::string>> refused = {
      {random_bytes, "Exec format error"},
      {corrupt_elf, "Exec format error"},
      {no_interpreter, "its interpreter /nonexistent/python9 cannot be run"},
      {not_executable, "Permission denied"}};
  for (const auto& [program, why] : refused) {
    SCOPED_TRACE(program.filename().string());
    fs::remove_all(out_);
    fs::create_directories(out_);
    std::ofstream(out_ / "report.json") << "earlier run\n";
    fc::harness::LaunchSpec spec;
    spec.argv = {FC_FORKCHECK, "exec", "--out", out_.string(), "--", program.string(), "arg"};
    spec.timeout_s = 60;
    spec.channel = false;
    auto r = fc::harness::supervise(spec);
    EXPECT_EQ(r.exit.code, 1) << r.out.text() << r.err.text();
    EXPECT_FALSE(contains(r.err.text(), "error:")) << "not a usage error: " << r.err.text();
    const json report = json::parse(slurp(out_ / "report.json"), nullptr, false);
    ASSERT_TRUE(report.is_object()) << slurp(out_ / "report.json");
    EXPECT_TRUE(report["run"].contains("finished_at")) << "a complete report";
    EXPECT_EQ(report["run"]["interrupted"], false);
    const json& v = report["cases"][0]["variants"][0];
    EXPECT_EQ(v["outcome"], "error");
    EXPECT_EQ(v["harness_error"], true);
    EXPECT_TRUE(contains(v["message"].get<std::string>(), "execve failed")) << v["message"];
    EXPECT_TRUE(contains(v["message"].get<std::string>(), why)) << v["message"];
    EXPECT_EQ(report["summary"]["harness_failures"], 1);
    EXPECT_EQ(report["summary"]["ok"], false);
    for (const char* f : {"report.html", "junit.xml", "summary.md", "issue.md", "run.jsonl"})
      EXPECT_TRUE(fs::exists(out_ / f)) << f;
    EXPECT_TRUE(contains(r.out.text(), why)) << "said on the terminal: " << r.out.text();
  }
}

}  // namespace
