// The ends of a program's processes (python_view.h), on made-up Python facts.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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
    const auto failed = failed_descendants(facts(parent, worker));
    ASSERT_EQ(failed.size(), 1u) << parent << " " << worker;
    EXPECT_EQ(failed[0].pid, worker);
    EXPECT_EQ(failed[0].how, "raised ValueError: bad row (exit status 1)") << parent;
    EXPECT_EQ(failed[0].what, "Process-1 (__main__.work)");
  }
}

}  // namespace
}  // namespace fc::reports
