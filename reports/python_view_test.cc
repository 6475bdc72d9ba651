// The ends of a program's processes (python_view.h), on made-up Python facts.
#include <optional>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/model/report_model_json.h"
#include "reports/python_view.h"

namespace fc::reports {
namespace {

using json = nlohmann::json;

// The program (pid `parent`) and a worker (pid `worker`) whose target raised; the parent learnt
// its end, exit status 1, and looked at nothing.
json facts(int parent, int worker) {
  json main = {{"pid", parent},
               {"born", "exec"},
               {"first_seen_s", 0.0},
               {"child_exits", json::array({{{"pid", worker},
                                             {"returncode", 1},
                                             {"name", "Process-1"},
                                             {"target", "__main__.work"}}})}};
  json child = {{"pid", worker},
                {"ppid", parent},
                {"born", "fork"},
                {"first_seen_s", 0.1},
                {"exceptions", json::array({{{"where", "process"},
                                             {"type", "builtins.ValueError"},
                                             {"message", "bad row"},
                                             {"frames", json::array()}}})}};
  // As the channel gives them: by pid.
  json processes = parent < worker ? json::array({main, child}) : json::array({child, main});
  return {{"pid", parent}, {"python", {{"processes", std::move(processes)}}}};
}

TEST(ProcessEnds, AWorkersExceptionIsKeptWhateverTheOrderOfThePids) {
  // After pid wrap-around a worker's pid is below its parent's, and comes first.
  for (const auto& [parent, worker] : {std::pair{100, 200}, std::pair{30000, 300}}) {
    const auto failed = failed_descendants(read_variant(facts(parent, worker)));
    ASSERT_EQ(failed.size(), 1u) << parent << " " << worker;
    EXPECT_EQ(failed[0].pid, worker);
    EXPECT_EQ(failed[0].how, "raised ValueError: bad row (exit status 1)") << parent;
    EXPECT_EQ(failed[0].what, "Process-1 (__main__.work)");
  }
}

// A program that exited 0 by itself while a worker failed is stored as an error saying so, what
// its message said besides kept; one that forkcheck ended (a hang, a timeout: its SIGTERM handler
// may exit 0), one that failed itself, or one already marked is left as it is.
TEST(ProcessEnds, ExitedZeroButAWorkerFailedIsAnErrorOnlyWhenItEndedByItself) {
  json v = facts(100, 200);
  v["role"] = "subject";
  v["outcome"] = "ok";
  v["message"] = "exited 0; watch: 2 forks, 2 hazardous";
  v["exit"] = {{"code", 0}, {"signal", nullptr}};
  EXPECT_TRUE(exited_zero_but_processes_failed(read_variant(v)));
  mark_processes_failed(v);
  EXPECT_EQ(v["outcome"], "error");
  EXPECT_EQ(v["message"],
            "exited 0, but a process of it failed: pid 200 Process-1 (__main__.work) raised "
            "ValueError: bad row (exit status 1); watch: 2 forks, 2 hazardous");
  EXPECT_TRUE(exited_zero_but_processes_failed(read_variant(v))) << "still said so once stored";
  const json marked = v;
  mark_processes_failed(v);
  EXPECT_EQ(v, marked) << "once";
  EXPECT_FALSE(program_error(read_variant(v)).has_value())
      << "a worker's traceback is not the program's";

  for (const char* outcome : {"hang", "timeout", "crash", "skip"}) {
    json other = facts(100, 200);
    other["role"] = "subject";
    other["outcome"] = outcome;
    other["exit"] = {{"code", 0}, {"signal", nullptr}};
    EXPECT_FALSE(exited_zero_but_processes_failed(read_variant(other))) << outcome;
    mark_processes_failed(other);
    EXPECT_EQ(other["outcome"], outcome);
  }
  json nonzero = facts(100, 200), attached = facts(100, 200), catalog = facts(100, 200);
  nonzero["role"] = attached["role"] = "subject";
  catalog["role"] = "fix";
  for (json* x : {&nonzero, &attached, &catalog}) (*x)["outcome"] = "ok";
  nonzero["exit"] = {{"code", 3}, {"signal", nullptr}};
  attached["exit"] = {{"code", nullptr}, {"signal", nullptr}};  // attach: its end is not ours
  catalog["exit"] = {{"code", 0}, {"signal", nullptr}};
  for (json* x : {&nonzero, &attached, &catalog}) {
    EXPECT_FALSE(exited_zero_but_processes_failed(read_variant(*x))) << x->dump();
    mark_processes_failed(*x);
    EXPECT_EQ((*x)["outcome"], "ok");
  }
}

// Forks alike in all but time are one entry, seq to last_seq: a child born of any of them is told
// where it was forked, and with which threads beside it.
TEST(ForkEntries, AFoldedEntryStandsForEachOfItsForks) {
  const json once = {{"seq", 4}};
  const json folded = {{"seq", 5}, {"last_seq", 304}, {"folded", 300}};
  const auto covers = [](const json& entry, std::optional<long long> seq) {
    return fork_entry_covers(read_as<PythonFork>(entry), seq);
  };
  EXPECT_TRUE(covers(once, 4));
  EXPECT_FALSE(covers(once, 5));
  for (int seq : {5, 6, 200, 304}) EXPECT_TRUE(covers(folded, seq)) << seq;
  for (int seq : {4, 305}) EXPECT_FALSE(covers(folded, seq)) << seq;
  EXPECT_FALSE(covers(folded, std::nullopt)) << "a child that does not say which fork it was";
  // A details.fork_guards entry, by its seq and last_seq.
  EXPECT_TRUE(fork_entry_covers(5, 304, 200));
  EXPECT_FALSE(fork_entry_covers(5, std::nullopt, 200));

  json fork = folded;
  fork["stack"] = json::array({{{"file", "/w/train.py"}, {"line", 9}, {"function", "<module>"}}});
  fork["threads"] = json::array({{{"name", "flusher"}}});
  const json parent = {
      {"pid", 40}, {"born", "exec"}, {"paths", {{"main", "/w"}}}, {"forks", json::array({fork})}};
  const json child = {{"pid", 41}, {"ppid", 40}, {"born", "fork"}, {"fork_seq", 200}};
  const json variant = {{"python", {{"processes", json::array({parent, child})}}}};
  const std::string said = fork_with_threads(read_variant(variant), 41);
  EXPECT_NE(said.find("by pid 40 while 1 other thread ran there: \"flusher\""), std::string::npos)
      << said;
}

}  // namespace
}  // namespace fc::reports
