// `forkcheck attach PID` end to end, on programs started here, not by forkcheck (fault_child in a
// process group of its own): a deadlock gives the finding exec gives for the same program (a
// hang, the stacks naming both stuck functions) and runs on afterwards; a partial deadlock names
// its stuck process and the catalog case that shows the same wait, as exec does; a working
// program is left running when --timeout ends the watch and is no finding; an end while watched
// is said, its status being its parent's; --kill-on-hang ends a hung tree; a pid that cannot be
// watched (or none given, or one given to --env) is a usage error that writes nothing.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/supervise/reaper.h"
#include "harness/supervise/supervisor.h"
#include "launch/boost_process_v1.h"
#include "launch/process_tree.h"
#include "read_text.h"

namespace {

namespace fs = std::filesystem;
using fc::test_text::contains;
using fc::test_text::slurp;
using nlohmann::json;

// A fault_child started by the test, in the test's own process group: the supervisor the test
// runs forkcheck under takes a child of ours in another group for an orphan of forkcheck's tree,
// and would end it with that tree. Killed when the test is done, with what it forked (`also`).
class Target {
 public:
  explicit Target(const std::vector<std::string>& args) {
    pid_ = ::fork();
    if (pid_ == 0) {
      std::vector<char*> argv = {const_cast<char*>(FC_FAULT_CHILD)};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(FC_FAULT_CHILD, argv.data());
      ::_exit(127);
    }
    fc::harness::Reaper::instance().watch(pid_);  // the supervisor reaps every child of ours
  }
  ~Target() {
    for (int p : also) ::kill(p, SIGKILL);
    ::kill(pid_, SIGKILL);
  }
  std::vector<int> also;
  Target(const Target&) = delete;
  Target& operator=(const Target&) = delete;
  int pid() const { return pid_; }
  // Alive, not a zombie, not stopped (by a signal or a debugger left on it): as it was.
  bool running() const {
    auto f = fc::launch::process_facts(pid_);
    return f && !f->zombie() && f->state != 'T' && f->state != 't';
  }

 private:
  int pid_ = -1;
};

class Attach : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("forkcheck-attach-test-" + std::string(info->name()) + "-" +
                                        std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  // forkcheck ARGS... --out DIR/NAME; the single variant of its report.json (null if none).
  json run(std::vector<std::string> args, const std::string& name, int& code) {
    fc::harness::LaunchSpec spec;
    spec.argv = {FC_FORKCHECK};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    const fs::path out = dir_ / name;
    if (args.front() == "attach") {
      spec.argv.push_back("--out");
      spec.argv.push_back(out.string());
    } else {
      spec.argv.insert(spec.argv.begin() + 2, {"--out", out.string()});
    }
    spec.timeout_s = 120;
    spec.channel = false;
    auto r = fc::harness::supervise(spec);
    code = r.exit.code;
    said_ = r.out.text() + r.err.text();
    const json report = json::parse(slurp(out / "report.json"), nullptr, false);
    if (!report.is_object() || report["cases"].size() != 1) return nullptr;
    return report["cases"][0]["variants"][0];
  }

  fs::path dir_;
  std::string said_;
};

bool names(const json& stacks, const std::string& function) {
  for (const auto& t : stacks)
    for (const auto& f : t["frames"])
      if (contains(f.get<std::string>(), function)) return true;
  return false;
}

bool has_debugger() {
  return !fc::bp::search_path("eu-stack").empty() || !fc::bp::search_path("gdb").empty();
}

TEST_F(Attach, ADeadlockGivesExecsFindingAndTheProgramRunsOn) {
  Target t({"deadlock"});
  int code = -1;
  const json v = run({"attach", std::to_string(t.pid()), "--hang-after", "2"}, "attach", code);
  ASSERT_TRUE(v.is_object()) << said_;
  EXPECT_EQ(code, 1) << said_;
  EXPECT_EQ(v["outcome"], "hang") << v["message"];
  EXPECT_EQ(v["started_via"], "attach");
  EXPECT_EQ(v["pid"], t.pid());
  const json& a = v["watchdog"]["attached"];
  EXPECT_TRUE(a["left_running"].get<bool>()) << a;
  EXPECT_FALSE(v["watchdog"]["sigterm"].get<bool>());
  EXPECT_FALSE(v["watchdog"]["sigkill"].get<bool>());
  EXPECT_TRUE(contains(v["message"].get<std::string>(), "left running")) << v["message"];
  // Looked at, not touched: it is still there, deadlocked.
  EXPECT_TRUE(t.running());

  // exec on the same program: the same outcome, called for the same reason.
  int exec_code = -1;
  const json e =
      run({"exec", "--hang-after", "2", "--", FC_FAULT_CHILD, "deadlock"}, "exec", exec_code);
  ASSERT_TRUE(e.is_object()) << said_;
  EXPECT_EQ(exec_code, 1);
  EXPECT_EQ(e["outcome"], v["outcome"]);
  EXPECT_EQ(e["watchdog"]["called_for"], v["watchdog"]["called_for"]);
  EXPECT_EQ(e["watchdog"]["tree"]["state"], v["watchdog"]["tree"]["state"]);
  if (!has_debugger()) GTEST_SKIP() << "neither eu-stack nor gdb: /proc gives no function names";
  if (v.value("stacks_method", "") == "proc")
    GTEST_SKIP() << "the debuggers were refused (no right to trace it here): "
                 << v.value("stacks_note", "");
  for (const json* x : {&v, &e}) {
    EXPECT_TRUE(names((*x)["stacks"], "lock_a_then_b")) << (*x)["stacks"].dump(1);
    EXPECT_TRUE(names((*x)["stacks"], "lock_b_then_a")) << (*x)["stacks"].dump(1);
  }
  EXPECT_TRUE(contains(slurp(dir_ / "attach" / "issue.md"), "lock_a_then_b"));
  EXPECT_TRUE(t.running());
}

// A process stuck on a lock only it could release, beside a parent that computes: named with its
// proof, and the case whose failure shows that wait, as exec names them.
TEST_F(Attach, APartialDeadlockNamesTheStuckProcessAndItsCaseAsExecDoes) {
  Target t({"stuck-child-busy"});
  int code = -1;
  const json v = run({"attach", std::to_string(t.pid()), "--hang-after", "2"}, "attach", code);
  ASSERT_TRUE(v.is_object()) << said_;
  EXPECT_EQ(code, 1) << said_;
  EXPECT_EQ(v["outcome"], "hang") << v["message"];
  ASSERT_TRUE(v["watchdog"].contains("stuck")) << v.dump(1);
  const int stuck = v["watchdog"]["stuck"]["pid"].get<int>();
  t.also.push_back(stuck);
  EXPECT_NE(stuck, t.pid());
  EXPECT_TRUE(contains(v["message"].get<std::string>(), "can never go on by itself"))
      << v["message"];
  EXPECT_EQ(v["watchdog"]["attached"]["running_at_end"].size(), 2u) << v["watchdog"];
  int exec_code = -1;
  const json e = run({"exec", "--hang-after", "2", "--", FC_FAULT_CHILD, "stuck-child-busy"},
                     "exec", exec_code);
  ASSERT_TRUE(e.is_object()) << said_;
  EXPECT_EQ(e["outcome"], "hang");
  EXPECT_EQ(e["details"].value("stuck_shown_by", ""), v["details"].value("stuck_shown_by", "?"));
  EXPECT_EQ(v["details"].value("stuck_shown_by", ""), "lock-held-at-fork") << v["details"];
  auto f = fc::launch::process_facts(stuck);
  EXPECT_TRUE(t.running() && f && !f->zombie()) << "both left running";
}

TEST_F(Attach, AWorkingProgramIsNoFindingAndRunsOnWhenTheWatchEnds) {
  Target t({"busy", "600"});
  int code = -1;
  const json v = run({"attach", std::to_string(t.pid()), "--timeout", "2"}, "attach", code);
  ASSERT_TRUE(v.is_object()) << said_;
  EXPECT_EQ(code, 0) << said_;
  EXPECT_EQ(v["outcome"], "ok") << v["message"];
  // Working, or starved on a busy machine: either way no hang, and said so.
  EXPECT_TRUE(contains(v["message"].get<std::string>(), "watch ended (--timeout): "))
      << v["message"];
  EXPECT_TRUE(contains(v["message"].get<std::string>(), ": no hang seen; left running"))
      << v["message"];
  EXPECT_TRUE(v["watchdog"]["attached"]["left_running"].get<bool>());
  EXPECT_TRUE(t.running());
}

// Ended while watched: forkcheck cannot read its exit status (its parent, the test, reaps it), and
// says so rather than guess one.
TEST_F(Attach, AnEndWhileWatchedIsSaidWithoutAnExitStatus) {
  Target t({"sleep", "600"});
  const fs::path out = dir_ / "attach";
  int err[2];
  ASSERT_EQ(::pipe(err), 0);
  const pid_t fc = ::fork();
  if (fc == 0) {
    ::dup2(err[1], STDERR_FILENO);
    ::dup2(err[1], STDOUT_FILENO);
    // The timeout only bounds a test that fails: the end comes from the test.
    ::execl(FC_FORKCHECK, FC_FORKCHECK, "attach", std::to_string(t.pid()).c_str(), "--timeout",
            "60", "--out", out.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(err[1]);
  // forkcheck says the tree sleeps once it has looked at it: it is attached then.
  std::string said;
  char buf[4096];
  ssize_t n;
  while (!contains(said, "SLEEPING") && (n = ::read(err[0], buf, sizeof buf)) > 0)
    said.append(buf, static_cast<size_t>(n));
  ASSERT_TRUE(contains(said, "SLEEPING")) << said;
  ::kill(t.pid(), SIGTERM);
  while ((n = ::read(err[0], buf, sizeof buf)) > 0) said.append(buf, static_cast<size_t>(n));
  ::close(err[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(fc, &status, 0), fc);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << said;
  const json report = json::parse(slurp(out / "report.json"), nullptr, false);
  ASSERT_TRUE(report.is_object()) << said;
  const json& v = report["cases"][0]["variants"][0];
  EXPECT_EQ(v["outcome"], "ok") << v["message"];
  EXPECT_TRUE(v["watchdog"]["attached"]["ended"].get<bool>());
  EXPECT_TRUE(contains(v["message"].get<std::string>(), "its exit status went to its parent"))
      << v["message"];
  EXPECT_FALSE(contains(v["message"].get<std::string>(), "SIGTERM"))
      << "no status was read: " << v["message"];
}

TEST_F(Attach, KillOnHangEndsAHungTreeAsExecWould) {
  Target t({"deadlock"});
  int code = -1;
  const json v = run({"attach", std::to_string(t.pid()), "--hang-after", "2", "--kill-on-hang"},
                     "attach", code);
  ASSERT_TRUE(v.is_object()) << said_;
  EXPECT_EQ(code, 1) << said_;
  EXPECT_EQ(v["outcome"], "hang");
  EXPECT_TRUE(v["watchdog"]["sigterm"].get<bool>() || v["watchdog"]["sigkill"].get<bool>());
  EXPECT_FALSE(t.running());
}

TEST_F(Attach, WhatCannotBeWatchedIsAUsageErrorThatWritesNothing) {
  // One past the largest pid the kernel gives: never a process.
  const long pid_max = std::stol(slurp("/proc/sys/kernel/pid_max"));
  const std::string never = (dir_ / "never").string();
  const std::vector<std::vector<std::string>> refused = {
      {"attach", std::to_string(pid_max + 1), "--out", never},
      {"attach", std::to_string(::getpid()), "--out", never},
      {"attach", "--out", never},                        // no pid
      {"attach", "--env", std::to_string(::getpid())}};  // --env watches nothing
  for (const auto& args : refused) {
    fc::harness::LaunchSpec spec;
    spec.argv = {FC_FORKCHECK};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.channel = false;
    auto r = fc::harness::supervise(spec);
    const std::string& pid = args[1];
    EXPECT_EQ(r.exit.code, 2) << pid;
    const std::string err = r.err.text();
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_TRUE(contains(err, "attach: ")) << err;
    EXPECT_FALSE(fs::exists(dir_ / "never")) << pid;
  }
}

}  // namespace
