// The rules of known shapes (reports/known_causes.h) on made-up variants: each finds its shape
// with this run's pids and lines, gives a fix only where the whole shape was seen, says what is
// missing where it was not, and finds nothing in a run without the shape.
#include "reports/known_causes.h"

#include <string>

#include <gtest/gtest.h>

namespace fc::reports {
namespace {

using json = nlohmann::json;

json frame(const std::string& file, int line, const std::string& function) {
  return {{"file", file}, {"line", line}, {"function", function}};
}

const std::string kLib = "/usr/lib/python3.11/multiprocessing/";

json thread(int pid, int tid, const std::string& syscall, json python) {
  return {{"pid", pid},      {"tid", tid},         {"name", "t"},
          {"state", "S"},    {"syscall", syscall}, {"frames", json::array()},
          {"python", python}};
}

// A parent (41) joining its child (57), whose queue feeder blocks writing the queue's pipe.
json queue_joined(bool with_chain) {
  json v = {{"role", "subject"}, {"outcome", "hang"}, {"stderr", ""}};
  v["stacks"] = json::array({thread(41, 41, "wait4",
                                    json::array({frame(kLib + "process.py", 149, "join"),
                                                 frame("/home/u/train.py", 18, "main")})),
                             thread(57, 60, "write",
                                    json::array({frame(kLib + "connection.py", 367, "_send"),
                                                 frame(kLib + "queues.py", 250, "_feed")}))});
  if (with_chain)
    v["wait_chain"] = {
        {"read", true},
        {"links",
         json::array(
             {{{"pid", 41}, {"tid", 41}, {"on", "child"}, {"child", 57}},
              {{"pid", 57},
               {"tid", 60},
               {"on", "files"},
               {"files",
                json::array({{{"kind", "pipe"},
                              {"holders", json::array({{{"pid", 41}, {"reads", true}},
                                                       {{"pid", 57}, {"reads", true}}})}}})}}})}};
  else
    v["wait_chain"] = {{"read", false}, {"why_not", "read on Linux only"}};
  return v;
}

TEST(KnownCauses, AQueueJoinedBeforeItWasDrainedNamesTheJoinAndMovesIt) {
  const auto c = known_cause(read_variant(queue_joined(true)));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->rule, "queue-joined-before-drained");
  EXPECT_NE(c->cause.find("pid 41 joins pid 57 (train.py:18 in main)"), std::string::npos)
      << c->cause;
  EXPECT_EQ(c->fix.rfind("at train.py:18 in main, take the items off the queue", 0), 0u) << c->fix;
  EXPECT_TRUE(c->missing.empty());
  EXPECT_EQ(c->source.rfind("https://docs.python.org/", 0), 0u);
}

TEST(KnownCauses, WithoutTheWaitChainTheQueueRuleSaysWhatItDidNotSeeAndGivesNoFix) {
  const auto c = known_cause(read_variant(queue_joined(false)));
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->fix.empty());
  EXPECT_NE(c->missing.find("Linux only"), std::string::npos) << c->missing;
  json other = queue_joined(true);
  other["wait_chain"]["links"][0]["child"] = 99;  // joins another process: not this shape
  EXPECT_FALSE(known_cause(read_variant(other)));
}

TEST(KnownCauses, AnUnpicklableObjectOnAQueueIsTheFeedersTracebackAndTheWaitingGet) {
  json v = {{"role", "subject"}, {"outcome", "hang"}};
  v["stderr"] =
      "Traceback (most recent call last):\n"
      "  File \"/usr/lib/python3.11/multiprocessing/queues.py\", line 244, in _feed\n"
      "    obj = _ForkingPickler.dumps(obj)\n"
      "  File \"/usr/lib/python3.11/multiprocessing/reduction.py\", line 51, in dumps\n"
      "    cls(buf, protocol).dump(obj)\n"
      "_pickle.PicklingError: Can't pickle <function <lambda> at 0x7f>: attribute lookup "
      "<lambda> on __main__ failed\n";
  v["stacks"] = json::array({thread(41, 41, "read",
                                    json::array({frame(kLib + "queues.py", 103, "get"),
                                                 frame("/home/u/put.py", 9, "<module>")}))});
  const auto c = known_cause(read_variant(v));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->rule, "queue-put-unpicklable");
  EXPECT_NE(c->cause.find("PicklingError: Can't pickle <function <lambda>"), std::string::npos);
  EXPECT_NE(c->cause.find("pid 41's get() at put.py:9 in <module> waits for ever"),
            std::string::npos)
      << c->cause;
  EXPECT_FALSE(c->fix.empty());
  v["outcome"] = "error";  // it ended: not this shape
  EXPECT_FALSE(known_cause(read_variant(v)));
}

json pool_hang(const std::string& how_code, bool with_where) {
  json v = {{"role", "subject"}, {"outcome", "hang"}, {"stderr", ""}};
  v["stacks"] = json::array(
      {thread(41, 41, "futex",
              json::array(
                  {frame(kLib + "pool.py", 367, "map"), frame("/home/u/p.py", 11, "<module>")})),
       thread(41, 43, "poll", json::array({frame(kLib + "pool.py", 522, "_handle_workers")}))});
  json worker = {{"pid", 42}, {"exceptions", json::array()}};
  if (with_where)
    worker["exceptions"].push_back({{"where", "process"},
                                    {"type", "builtins.SystemExit"},
                                    {"message", "1"},
                                    {"frames", json::array({frame(kLib + "pool.py", 125, "worker"),
                                                            frame("/home/u/p.py", 6, "work")})}});
  v["python"] = {
      {"processes",
       json::array({{{"pid", 41},
                     {"born", "exec"},
                     {"child_exits", json::array({{{"pid", 42},
                                                   {"name", "ForkPoolWorker-1"},
                                                   {"returncode", std::stoi(how_code)}}})}},
                    worker})}};
  v["pid"] = 41;
  return v;
}

TEST(KnownCauses, APoolWorkerThatExitedMidTaskIsNamedWithItsLineAndTheWaitingMap) {
  const auto c = known_cause(read_variant(pool_hang("1", true)));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->rule, "pool-worker-ended-mid-task");
  EXPECT_NE(c->cause.find("pid 42 ForkPoolWorker-1 raised SystemExit: 1 (exit status 1) at "
                          "p.py:6 in work"),
            std::string::npos)
      << c->cause;
  EXPECT_NE(c->cause.find("pid 41 at p.py:11 in <module> waits"), std::string::npos);
  EXPECT_EQ(c->fix.rfind("at p.py:6 in work, raise an exception", 0), 0u) << c->fix;
  // Nothing of its end told: that it was in a task is not seen; no fix.
  const auto unplaced = known_cause(read_variant(pool_hang("1", false)));
  ASSERT_TRUE(unplaced);
  EXPECT_TRUE(unplaced->fix.empty());
  EXPECT_NE(unplaced->missing.find("whether pid 42 was running a task"), std::string::npos)
      << unplaced->missing;
  // It told an end outside the Pool's worker loop (a spawned worker failing at start): not this.
  json at_start = pool_hang("1", true);
  at_start["python"]["processes"][1]["exceptions"][0]["frames"] =
      json::array({frame("/home/u/p.py", 3, "<module>")});
  EXPECT_FALSE(known_cause(read_variant(at_start)));
  // Two Pools alive in the waiting process: which one lost the task is not known, no fix.
  json two = pool_hang("1", true);
  two["stacks"].push_back(
      thread(41, 44, "poll", json::array({frame(kLib + "pool.py", 522, "_handle_workers")})));
  ASSERT_TRUE(known_cause(read_variant(two)));
  EXPECT_TRUE(known_cause(read_variant(two))->fix.empty());
  EXPECT_NE(known_cause(read_variant(two))->missing.find("has 2 Pools alive"), std::string::npos);
  // None read (its handler thread's stack not read, say): not said to have none.
  json none = pool_hang("1", true);
  json kept = json::array();
  for (const auto& t : none["stacks"])
    if (t.dump().find("_handle_workers") == std::string::npos) kept.push_back(t);
  none["stacks"] = kept;
  ASSERT_TRUE(known_cause(read_variant(none)));
  EXPECT_TRUE(known_cause(read_variant(none))->fix.empty());
  EXPECT_NE(known_cause(read_variant(none))->missing.find("no thread of pid"), std::string::npos)
      << known_cause(read_variant(none))->missing;
  EXPECT_EQ(known_cause(read_variant(none))->missing.find("0 Pools"), std::string::npos);
  // A worker that is not the waiting process's child: not this shape.
  json other = pool_hang("1", true);
  other["python"]["processes"][0]["pid"] = 50;  // the worker's parent is pid 50, not the waiter
  EXPECT_FALSE(known_cause(read_variant(other)));
  // Killed by a signal: who sent it is not seen; the fix is for the hang alone.
  const auto killed = known_cause(read_variant(pool_hang("-9", false)));
  ASSERT_TRUE(killed);
  EXPECT_NE(killed->fix.find("ProcessPoolExecutor"), std::string::npos);
  EXPECT_NE(killed->missing.find("who sent the signal"), std::string::npos);
}

TEST(KnownCauses, AResultReadAfterThePoolWasTerminatedNeedsThePoolGone) {
  json v = {{"role", "subject"}, {"outcome", "hang"}, {"stderr", ""}};
  v["stacks"] = json::array({thread(
      41, 41, "futex",
      json::array({frame(kLib + "pool.py", 765, "wait"), frame(kLib + "pool.py", 768, "get"),
                   frame("/home/u/w.py", 21, "<module>")}))});
  const auto c = known_cause(read_variant(v));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->rule, "pool-result-after-terminate");
  EXPECT_EQ(c->fix.rfind("at w.py:21, take the result while the Pool is alive", 0), 0u) << c->fix;
  // Its result handler still there: the Pool is alive, and the wait is another story.
  v["stacks"].push_back(
      thread(41, 44, "read", json::array({frame(kLib + "pool.py", 579, "_handle_results")})));
  EXPECT_FALSE(known_cause(read_variant(v)) &&
               known_cause(read_variant(v))->rule == "pool-result-after-terminate");
}

TEST(KnownCauses, ATerminatedChildThatGoesOnNeedsItsOwnSigtermHandler) {
  json v = {{"role", "subject"}, {"outcome", "hang"}, {"stderr", ""}};
  v["stacks"] =
      json::array({thread(41, 41, "wait4",
                          json::array({frame(kLib + "process.py", 149, "join"),
                                       frame("/home/u/t.py", 32, "<module>")})),
                   thread(57, 57, "read", json::array({frame("/home/u/t.py", 22, "worker")}))});
  const json where = frame("/home/u/t.py", 31, "<module>");
  v["python"] = {
      {"processes",
       json::array({{{"pid", 41},
                     {"ends_asked",
                      json::array({{{"child", 57}, {"how", "terminate"}, {"where", where}}})}},
                    {{"pid", 57},
                     {"signal_handlers",
                      json::array({{{"signal", "SIGTERM"},
                                    {"handler", "__main__.on_sigterm"},
                                    {"where", frame("/home/u/t.py", 20, "worker")}}})}}})}};
  v["wait_chain"] = {
      {"read", true},
      {"links", json::array({{{"pid", 41}, {"tid", 41}, {"on", "child"}, {"child", 57}}})},
      {"processes", {{"57", {{"state", "blocked"}}}}}};
  const auto c = known_cause(read_variant(v));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->rule, "sigterm-handler-returned");
  EXPECT_NE(c->cause.find("terminate() at t.py:31 in <module>"), std::string::npos) << c->cause;
  EXPECT_EQ(c->fix.rfind("in __main__.on_sigterm (set at t.py:20 in worker)", 0), 0u) << c->fix;
  // The child asleep in a step that ends (its loop may yet see the handler's flag), or the join
  // on another child: not this shape.
  v["wait_chain"]["processes"]["57"]["state"] = "asleep";
  EXPECT_FALSE(known_cause(read_variant(v)));
  v["wait_chain"]["processes"]["57"]["state"] = "blocked";
  v["wait_chain"]["links"][0]["child"] = 58;
  EXPECT_FALSE(known_cause(read_variant(v)));
  v["wait_chain"]["links"][0]["child"] = 57;
  // SIGTERM back to its default: no handler went on; nothing known.
  v["python"]["processes"][1]["signal_handlers"][0]["handler"] = "SIG_DFL";
  EXPECT_FALSE(known_cause(read_variant(v)));
}

TEST(KnownCauses, ADataLoaderWorkerKilledMidMessageIsTheCauseOfTheMainProcesssOtherError) {
  // The worker dies as the main process reads from it: ConnectionResetError, not "exited
  // unexpectedly". Its death is still the cause; no fix for a native crash.
  json v = {{"role", "subject"}, {"outcome", "error"}, {"stacks", json::array()}};
  v["stderr"] =
      "Traceback (most recent call last):\n  File \"/home/u/dl.py\", line 23, in <module>\n"
      "ConnectionResetError: [Errno 104] Connection reset by peer\n";
  v["python"] = {
      {"processes",
       json::array({{{"pid", 41},
                     {"born", "exec"},
                     {"child_exits",
                      json::array({{{"pid", 42},
                                    {"name", "Process-1"},
                                    {"target", "torch.utils.data._utils.worker._worker_loop"},
                                    {"returncode", -11},
                                    {"signal", "SIGSEGV"}}})}}})}};
  v["pid"] = 41;
  const auto c = known_cause(read_variant(v));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->rule, "dataloader-worker-died");
  EXPECT_NE(c->cause.find("DataLoader worker pid 42 killed by SIGSEGV"), std::string::npos)
      << c->cause;
  EXPECT_NE(c->cause.find("failed with ConnectionResetError"), std::string::npos) << c->cause;
  EXPECT_TRUE(c->fix.empty());
  // Another process killed so is not a DataLoader worker: nothing.
  v["python"]["processes"][0]["child_exits"][0]["target"] = "__main__.work";
  EXPECT_FALSE(known_cause(read_variant(v)));
}

TEST(KnownCauses, ARunWithoutAKnownShapeHasNoCause) {
  json v = {{"role", "subject"}, {"outcome", "hang"}, {"stderr", ""}, {"stacks", json::array()}};
  EXPECT_FALSE(known_cause(read_variant(v)));
  v["outcome"] = "error";
  v["stderr"] =
      "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n"
      "ValueError: bad\n";
  EXPECT_FALSE(known_cause(read_variant(v)));
}

TEST(KnownCauses, EveryRuleHasAPublicSourceAndAProgram) {
  for (const auto& r : cause_rules()) {
    EXPECT_EQ(std::string(r.source).rfind("https://", 0), 0u) << r.id;
    EXPECT_NE(std::string(r.program).find(".py"), std::string::npos) << r.id;
  }
}

}  // namespace
}  // namespace fc::reports
