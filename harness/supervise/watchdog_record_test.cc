// The records the run log keeps of a child (watchdog_record.h, ExitStatus::to_json) against the
// report model (reports/model): every key the harness writes is one the model reads, so that no
// fact is recorded that no report can show, and the model reads each back as written.
#include "harness/supervise/watchdog_record.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reports/model/report_model_json.h"

namespace fc::harness {
namespace {

using nlohmann::json;

template <class T>
void expect_every_key_read(const json& record, const std::string& what) {
  ASSERT_TRUE(record.is_object()) << what;
  const std::vector<std::string> keys = reports::report_keys(static_cast<const T*>(nullptr));
  for (const auto& [key, value] : record.items())
    EXPECT_NE(std::find(keys.begin(), keys.end(), key), keys.end())
        << what << " writes \"" << key << "\", which the report model does not read";
}

// A child with every fact the watchdog can record.
ChildResult everything() {
  ChildResult r;
  r.started = true;
  r.pid = 41;
  r.duration_s = 9.5;
  r.timeout_s = 30;
  r.called_for = TimeCalled::kStuck;
  r.called_after_s = 8.0;
  r.hang_after_s = 3.0;
  r.paused_s = 1.5;
  r.sent_sigterm = true;
  r.leftovers_killed = {57};
  r.leftovers_surviving = {57};
  r.group_strangers = {99};
  r.step_hang = StepHang{41, "join", 2.0, 2.5};
  r.stuck = ProcessStall{57, 41, "python3", 1, false, 1.0, 4.0, 0.98, false};
  r.tree.blocked = false;
  r.tree.sleep = TreeSleep{41,
                           42,
                           "python3",
                           "clock_nanosleep",
                           1.0,
                           2.5,
                           true,
                           true,
                           json{{"file", "t.py"}, {"line", 3}, {"function", "main"}}};
  r.tree.still_s = 0.5;
  r.tree.window_s = 1.0;
  r.tree.cpu_s_in_window = 0.002;
  r.tree.cpu_s = 0.4;
  r.tree.processes = 2;
  r.tree.threads = 5;
  r.tree.looks = 80;
  r.tree.waiting_in = "futex (3)";
  r.attached = AttachedWatch{1, true, false, {41, 57}};
  r.look_signals = {{41, "asked one of its threads for its stack", 8.1}};
  return r;
}

TEST(WatchdogRecord, EveryKeyItWritesIsOneTheReportModelReads) {
  const ChildResult r = everything();
  const json w = watchdog_record(r);
  expect_every_key_read<reports::Watchdog>(w, "the watchdog record");
  expect_every_key_read<reports::TreeLook>(w.at("tree"), "its tree");
  expect_every_key_read<reports::Sleep>(w.at("tree").at("sleep"), "its sleep");
  expect_every_key_read<reports::Alarm>(w.at("tree").at("sleep").at("alarm"), "its alarm");
  expect_every_key_read<reports::StuckProcess>(w.at("stuck"), "its stuck process");
  expect_every_key_read<reports::Attached>(w.at("attached"), "its attach");
  expect_every_key_read<reports::Activity>(w.at("activity"), "its activity");
  expect_every_key_read<reports::LookSignal>(w.at("look_signals").at(0), "a look signal");
  expect_every_key_read<reports::StepHang>(step_hang_record(r), "the step hang");
  // And the model reads back what was written.
  const auto m = reports::read_as<reports::Watchdog>(w);
  EXPECT_EQ(m.called_for, "stuck");
  EXPECT_EQ(m.hang_after_s, 3.0);
  ASSERT_TRUE(m.stuck.has_value());
  EXPECT_EQ(m.stuck->pid, 57);
  ASSERT_TRUE(m.tree && m.tree->sleep && m.tree->sleep->alarm && m.tree->sleep->alarm->where);
  EXPECT_EQ(m.tree->sleep->alarm->where->line, 3);
  EXPECT_EQ(m.look_signals.size(), 1u);
}

TEST(WatchdogRecord, ADeathAfterALookAndAnExitAreReadAsWritten) {
  ChildResult r = everything();
  r.sent_sigterm = false;
  r.exit.ended = true;
  r.exit.signal = 11;
  r.duration_s = 8.2;  // 100 ms after the look at 8.1 s
  const json w = watchdog_record(r);
  ASSERT_TRUE(w.contains("died_after_look"));
  expect_every_key_read<reports::DiedAfterLook>(w.at("died_after_look"), "a death after a look");
  expect_every_key_read<reports::Exit>(r.exit.to_json(), "the exit");
  const auto e = reports::read_as<reports::Exit>(r.exit.to_json());
  EXPECT_EQ(e.signal, 11);
  EXPECT_FALSE(e.code.has_value());
}

}  // namespace
}  // namespace fc::harness
