// issue.md and the key finding (reports/finding.h): a stuck Python program's ticket names the
// file and line where parent and workers wait, one line per place; the fix is named only where
// the run showed its reason (libgomp in the stacks; every spawn/forkserver fix ok); a skipped
// case says why; whatever the run, issue.md stays under 10 KB.
#include <string>

#include <gtest/gtest.h>

#include "reports/finding.h"
#include "reports/reporter.h"
#include "reports/synthetic_report.h"

namespace fc::reports {
namespace {

using nlohmann::json;
using testing::variant;

json python_thread(int pid, int tid, const std::string& file, int line, const std::string& function,
                   bool gomp) {
  json frames = gomp ? json::array({"?? from /lib/x86_64-linux-gnu/libgomp.so.1",
                                    "GOMP_parallel from /lib/x86_64-linux-gnu/libgomp.so.1"})
                     : json::array({"__futex_abstimed_wait_common at ./nptl/futex-internal.c:57"});
  return {{"pid", pid},
          {"tid", tid},
          {"name", "python3"},
          {"state", "S"},
          {"frames", frames},
          {"python",
           json::array(
               {{{"file", "/usr/lib/python3.11/threading.py"}, {"line", 320}, {"function", "wait"}},
                {{"file", file},
                 {"line", line},
                 {"function", function},
                 {"code", "pool.map(work)"}}})}};
}

json subject_report(const json& stacks) {
  json v =
      variant("exec", "none", "subject", "ok", "hang",
              "blocked when its 30.0 s deadline passed: the whole tree had been still for 28 s");
  v["stacks"] = stacks;
  json c = {{"id", "exec"},
            {"verdict", "failed"},
            {"verdict_reason", "hang"},
            {"variants", json::array({v})}};
  return {{"tool", {{"version", "0.1.0"}}},
          {"run",
           {{"argv",
             json::array({"forkcheck", "exec", "--timeout", "30", "--", "python3", "train.py"})},
            {"environment", json::object()}}},
          {"cases", json::array({c})},
          {"summary", {{"ok", false}}}};
}

TEST(KeyFinding, AStuckPythonPoolIsNamedByFileAndLineOnePlacePerLine) {
  const json stacks = json::array({python_thread(10, 10, "/home/u/train.py", 13, "main", false),
                                   python_thread(11, 11, "/home/u/train.py", 5, "work", true),
                                   python_thread(12, 12, "/home/u/train.py", 5, "work", true)});
  const Finding f = key_finding(read_report(subject_report(stacks)));
  EXPECT_TRUE(f.bad);
  EXPECT_EQ(f.headline.rfind("exec: hang: ", 0), 0u) << f.headline;
  ASSERT_EQ(f.facts.size(), 2u);
  EXPECT_EQ(f.facts[0], "pid 10 python3: train.py:13 in main");
  EXPECT_EQ(f.facts[1], "pid 11 python3 and 1 more: train.py:5 in work");
  EXPECT_NE(f.fix.find("libgomp"), std::string::npos) << f.fix;

  const std::string issue = make_issue_reporter()->render(read_report(subject_report(stacks)));
  EXPECT_NE(issue.find("train.py:13 in main"), std::string::npos) << issue;
  EXPECT_NE(issue.find("**Fix:**"), std::string::npos);
  EXPECT_NE(issue.find("forkcheck exec --timeout 30 -- python3 train.py"), std::string::npos)
      << issue;
}

TEST(KeyFinding, NoFixIsClaimedWithoutItsReason) {
  const json stacks = json::array({python_thread(10, 10, "/home/u/train.py", 13, "main", false)});
  EXPECT_EQ(key_finding(read_report(subject_report(stacks))).fix, "")
      << "no libgomp frame: no libgomp fix";

  json r = testing::synthetic_report();
  for (auto& c : r["cases"])
    for (auto& v : c["variants"])
      if (v["role"] == "fix" && v["start_method"] == "spawn") v["outcome"] = "error";
  EXPECT_EQ(key_finding(read_report(r)).fix, "")
      << "a spawn fix failed: spawn is not advised as the fix";
}

// A torch process's idle OpenMP pool threads sit in libgomp: that is no sign of the fork hang.
TEST(KeyFinding, IdlePoolThreadsInLibgompAreNoReasonForTheGompFix) {
  json main_thread = python_thread(10, 10, "/home/u/train.py", 13, "main", false);
  json pool_thread = python_thread(10, 11, "/home/u/train.py", 13, "main", true);
  pool_thread["python"] = json::array();
  EXPECT_EQ(key_finding(read_report(subject_report(json::array({main_thread, pool_thread})))).fix,
            "");
}

// A native deadlock: each locker is named by its own function, not by the C library's lock
// wrappers they share (which made one line of both).
TEST(KeyFinding, NativeWaitsAreNamedByTheProgramsOwnFunctions) {
  auto thread = [](int tid, const std::string& locker) {
    return json{{"pid", 7},
                {"tid", tid},
                {"name", "dl"},
                {"frames",
                 json::array({"__GI___lll_lock_wait at ../sysdeps/nptl/futex-internal.h:146",
                              "__pthread_mutex_lock@GLIBC_2.2.5 at ./nptl/pthread_mutex_lock.c:48",
                              "(anonymous namespace)::" + locker + " at /src/dl.cc:9",
                              "start_thread at ./nptl/pthread_create.c:442"})}};
  };
  const auto lines = where_it_waits(
      read_stacks(json::array({thread(8, "lock_a_then_b"), thread(9, "lock_b_then_a")})), 8);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "pid 7 dl: __GI___lll_lock_wait < (anonymous namespace)::lock_a_then_b");
  EXPECT_EQ(lines[1], "pid 7 dl: __GI___lll_lock_wait < (anonymous namespace)::lock_b_then_a");
}

TEST(KeyFinding, ASkippedCaseSaysWhy) {
  json r = testing::synthetic_report();
  r["cases"].push_back(
      {{"id", "skipped-case"},
       {"verdict", "skipped"},
       {"verdict_reason", "no CUDA driver: libcuda.so.1 not found"},
       {"variants", json::array({variant("fork", "fork", "hazard", "skip", "skip", "no CUDA")})}});
  const Finding f = key_finding(read_report(r));
  bool said = false;
  for (const auto& fact : f.facts)
    said = said || fact == "skipped-case: skipped (no CUDA driver: libcuda.so.1 not found)";
  EXPECT_TRUE(said);
}

// issue.md's Environment says each fact once: the CPUs and the variables forkcheck measured stand
// in for the repro program's lines of the same name.
TEST(IssueMd, EachEnvironmentFactOnce) {
  json r = subject_report(json::array());
  r["run"]["environment"] = {
      {"cpus", {{"online", 2}, {"affinity", 2}}},
      {"variables", json::object()},
      {"machine",
       {{"cpus", {{"online", 2}, {"affinity", 1}}}, {"variables", {{"OMP_NUM_THREADS", "1"}}}}}};
  const std::string issue = make_issue_reporter()->render(read_report(r));
  auto count = [&issue](const std::string& what) {
    std::size_t n = 0;
    for (std::size_t p = 0; (p = issue.find(what, p)) != std::string::npos; ++p) ++n;
    return n;
  };
  EXPECT_EQ(count("- CPUs: "), 1u) << issue;
  EXPECT_EQ(count("- variables: "), 1u) << issue;
  EXPECT_NE(issue.find("- CPUs: 2 online, 1 in the affinity mask"), std::string::npos) << issue;
  EXPECT_NE(issue.find("OMP\\_NUM\\_THREADS=1"), std::string::npos) << issue;
  EXPECT_NE(issue.find("- libtorch: not loaded"), std::string::npos) << "said of a catalog's";
  // A user's program: no word of the catalog's libtorch (its Python side says its own torch).
  r["run"]["environment"]["collected_by"] = {{"program", "forkcheck-repro"},
                                             {"user_program", true}};
  EXPECT_EQ(make_issue_reporter()->render(read_report(r)).find("libtorch"), std::string::npos);
}

TEST(IssueMd, StaysUnderTenKilobytesWhateverTheRun) {
  json stacks = json::array();
  for (int i = 0; i < 400; ++i)
    stacks.push_back(
        python_thread(100 + i, 100 + i, "/w/m" + std::to_string(i) + ".py", i, "f", i % 2 == 0));
  json r = subject_report(stacks);
  r["cases"][0]["variants"][0]["stderr"] = std::string(100000, 'e');
  json env = json::object();
  for (int i = 0; i < 300; ++i) env["variables"]["V" + std::to_string(i)] = std::string(300, 'v');
  r["run"]["environment"] = env;
  const std::string issue = make_issue_reporter()->render(read_report(r));
  EXPECT_LT(issue.size(), kIssueMaxBytes);
  EXPECT_EQ(issue.rfind("## forkcheck: exec: hang", 0), 0u) << "the finding survives the cut";
  EXPECT_NE(issue.find("Full reports beside this file"), std::string::npos) << "and the footer";

  const std::string big_catalog =
      make_issue_reporter()->render(read_report(testing::synthetic_report()));
  EXPECT_LT(big_catalog.size(), kIssueMaxBytes);
}

}  // namespace
}  // namespace fc::reports
