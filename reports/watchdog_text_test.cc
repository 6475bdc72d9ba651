// reports/watchdog_text.h: the watchdog's facts, as the run log records them, in words. Each
// reason time was called has its sentence; what the tree was doing is said by tree_facts() alone,
// never again in the sentence of why.
#include "reports/watchdog_text.h"

#include <string>

#include <gtest/gtest.h>

#include "reports/model/report_model_json.h"

namespace fc::reports {
namespace {

using json = nlohmann::json;

// The record as the reports read it (the run log's JSON, into the model).
Watchdog model(const json& w) { return read_as<Watchdog>(w); }
std::optional<StepHang> hang_model(const json& h) {
  if (!h.is_object()) return std::nullopt;
  return read_as<StepHang>(h);
}
std::string tree_facts_in(const json& v) {
  const Variant m = read_variant(v);
  return tree_facts(m.watchdog, m.outcome);
}

json tree(const char* state, double still_s = 0) {
  return {{"state", state},
          {"still_s", still_s},
          {"starved_s", 3.5},
          {"window_s", 1.0},
          {"cpu_s_in_window", 0.0004},
          {"processes", 3},
          {"threads", 7},
          {"waiting_in", "futex (5), wait4 (2)"}};
}

json watchdog(const char* called_for, const char* state, double still_s = 0) {
  return {{"called_for", called_for},    {"timeout_s", 5.0}, {"hang_after_s", 3.0},
          {"called_after_s", 3.1},       {"sigterm", true},  {"sigkill", false},
          {"tree", tree(state, still_s)}};
}

const json kStuck = {{"pid", 7},
                     {"name", "python3"},
                     {"threads", 1},
                     {"stuck_s", 4.0},
                     {"rest_still", false},
                     {"rest_cpu_share", 0.98},
                     {"wait", "futex, private, no timeout"}};

TEST(WatchdogText, EachReasonTimeWasCalledHasItsSentence) {
  json stuck_deadline = watchdog("deadline", "working");
  stuck_deadline["stuck"] = kStuck;
  json stuck_long = watchdog("stuck", "working");
  stuck_long["stuck"] = kStuck;
  json step_beside_work = watchdog("step", "working");
  step_beside_work["stuck"] = kStuck;
  json step_all_still = watchdog("step", "blocked", 1.0);
  step_all_still["stuck"] = kStuck;
  json stall_with_stuck = watchdog("stall", "blocked", 3.0);
  stall_with_stuck["stuck"] = kStuck;
  const std::string stuck_words =
      "pid 7 [python3] can never go on by itself: its one thread has waited on a futex private "
      "to it, with no timeout, for 4.0 s (nothing but a signal could wake it)";
  const json step = {{"pid", 12}, {"step", "join"}, {"within_s", 2.0}, {"waited_s", 2.5}};
  struct Row {
    const char* what;
    json w, hang;
    std::string says;
  };
  const Row rows[] = {
      {"blocked at the deadline", watchdog("deadline", "blocked", 3.9), nullptr,
       "blocked when its 5.0 s deadline passed: the whole tree had been still for 3.9 s"},
      {"working at the deadline", watchdog("deadline", "working"), nullptr,
       "still working when its 5.0 s deadline passed: a timeout, not a hang"},
      {"starved at the deadline", watchdog("deadline", "starved"), nullptr,
       "starved when its 5.0 s deadline passed: runnable but waiting for a CPU for 3.5 s: the "
       "machine is overloaded: a timeout, not a hang"},
      {"one process stuck at the deadline", stuck_deadline, nullptr,
       "blocked in part when its 5.0 s deadline passed: pid 7 [python3] can never go on by itself: "
       "its one thread has waited on a futex private to it, with no timeout, for 4.0 s (nothing "
       "but a signal could wake it), while the rest of the tree kept working (98% of a CPU): a "
       "partial deadlock"},
      {"still for --hang-after", watchdog("stall", "blocked", 3.0), nullptr,
       "the whole tree had been still for 3.0 s, past the 3.0 s a stall may last (--hang-after) "
       "(called after 3.1 s)"},
      {"stuck for --hang-after", stuck_long, nullptr,
       "pid 7 [python3] can never go on by itself: its one thread has waited on a futex private "
       "to it, with no timeout, for 4.0 s (nothing but a signal could wake it), past the 3.0 s a "
       "stall may last (--hang-after); the rest of the tree kept working (98% of a CPU) (called "
       "after 3.1 s)"},
      {"a step that did not come back", watchdog("step", "blocked", 1.0), step,
       "pid 12 entered \"join\" and did not come back within 2.0 s, the whole tree blocked for "
       "1.0 s (called after 2.5 s)"},
      {"a step stuck in one process while the rest works", step_beside_work, step,
       "pid 12 entered \"join\" and did not come back within 2.0 s; " + stuck_words +
           ", while the rest of the tree kept working (98% of a CPU) (called after 2.5 s)"},
      {"a step, the whole tree still and one process stuck", step_all_still, step,
       "pid 12 entered \"join\" and did not come back within 2.0 s, the whole tree blocked for "
       "1.0 s (called after 2.5 s); " +
           stuck_words},
      {"still for --hang-after, one process stuck", stall_with_stuck, nullptr,
       "the whole tree had been still for 3.0 s, past the 3.0 s a stall may last (--hang-after) "
       "(called after 3.1 s); " +
           stuck_words},
  };
  for (const auto& r : rows) {
    const std::string text = time_called_text(model(r.w), hang_model(r.hang));
    EXPECT_EQ(text, r.says) << r.what;
    // The tree's own facts are tree_facts()'s: not said twice.
    EXPECT_EQ(text.find("of CPU in the last"), std::string::npos) << r.what;
    EXPECT_EQ(text.find("7 threads"), std::string::npos) << r.what;
  }
}

TEST(WatchdogText, TheRestOfTheTreeIsSaidToWorkOnlyWhereItUsedACPU) {
  EXPECT_EQ(rest_of_tree_text(false, 0.98), "the rest of the tree kept working (98% of a CPU)");
  EXPECT_EQ(rest_of_tree_text(true, 0), "the rest of the tree was still too");
  // Not still (it wrote output, say) with next to no CPU: not "kept working (0% of a CPU)".
  const std::string idle = rest_of_tree_text(false, 0.002);
  EXPECT_EQ(idle.find("kept working"), std::string::npos) << idle;
  EXPECT_NE(idle.find("not still, though it used under 1% of a CPU"), std::string::npos) << idle;
}

TEST(WatchdogText, EndingSurvivorsAndAnEndOfItsOwn) {
  json w = watchdog("deadline", "working");
#ifndef _WIN32
  EXPECT_EQ(escalation_text(model(w)), "; SIGTERM ended it");
  w["sigkill"] = true;
  EXPECT_EQ(escalation_text(model(w)), "; SIGTERM was not enough, SIGKILL ended it");
#endif
  w["sigterm"] = w["sigkill"] = false;
  EXPECT_EQ(escalation_text(model(w)), "");
  EXPECT_EQ(survivors_text(model(w)), "");
  w["leftovers_surviving"] = {41, 42};
  w["group_strangers"] = {9};
  EXPECT_EQ(survivors_text(model(w)),
            "; still alive after every SIGKILL: pid 41, 42; pid 9 joined its process group from "
            "outside its tree and was spared (the group was not signalled as a whole)");
  EXPECT_EQ(ended_by_itself_text(model(w)), "") << "only when it did";
  w["exited_by_itself"] = true;
  w["deadline_to_end_s"] = 0.2;
  EXPECT_EQ(ended_by_itself_text(model(w)),
            " (its 5.0 s deadline had passed, but it ended by itself 0.2 s later, before "
            "forkcheck signalled it: the outcome is that of its own end)");
  w["called_for"] = "stall";
  EXPECT_EQ(ended_by_itself_text(model(w)).rfind(" (a stall was called on it, but", 0), 0u);
  w["called_for"] = "start-failures";
  EXPECT_EQ(ended_by_itself_text(model(w)).rfind(
                " (forkcheck was ending it for its processes' failures at start, but", 0),
            0u);
  w.erase("deadline_to_end_s");
  EXPECT_NE(ended_by_itself_text(model(w)).find("but it ended by itself, before"),
            std::string::npos)
      << "no made-up delay where none was recorded";
}

TEST(WatchdogText, ADeathJustAfterForkcheckLookedIsNotCalledTheProgramsOwn) {
  EXPECT_EQ(died_after_look_text(model(json::object())), "");
  const json w = {{"died_after_look",
                   {{"pid", 7},
                    {"what", "asked its main thread for every thread's stack"},
                    {"after_s", 0.12},
                    {"how", "killed by SIGSEGV (Segmentation fault)"}}}};
  EXPECT_EQ(died_after_look_text(model(w)),
            "killed by SIGSEGV (Segmentation fault) 120 ms after forkcheck asked its main thread "
            "for every thread's stack: forkcheck may have caused it, so it is not said to be the "
            "program's own crash");
}

TEST(WatchdogText, TreeFactsSayEachStateOnce) {
  json v = {{"outcome", "timeout"}, {"watchdog", watchdog("deadline", "starved")}};
  EXPECT_EQ(tree_facts_in(v),
            "starved (wanting a CPU, getting next to none): 0.4 ms of CPU in the last 1.0 s, 3 "
            "processes, 7 threads; in futex (5), wait4 (2)");
  v["watchdog"]["tree"]["state"] = "blocked";
  v["watchdog"]["tree"]["still_s"] = 3.2;
  v["watchdog"]["tree"]["cpu_s_in_window"] = 0.00001;
  EXPECT_EQ(tree_facts_in(v),
            "blocked for 3.2 s: under 0.1 ms of CPU in the last 1.0 s, 3 processes, 7 threads "
            "waiting in futex (5), wait4 (2)");
  EXPECT_EQ(tree_facts_in(json{{"outcome", "ok"}}), "") << "no tree recorded";
}

}  // namespace
}  // namespace fc::reports
