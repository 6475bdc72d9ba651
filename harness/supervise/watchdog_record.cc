#include "harness/supervise/watchdog_record.h"

#include "harness/supervise/classify.h"

namespace fc::harness {
namespace {

// Why the watchdog called time, as the run log names it.
const char* called_for(const ChildResult& r) {
  switch (r.called_for) {
    case TimeCalled::kStep:
      return "step";
    case TimeCalled::kStall:
      return "stall";
    case TimeCalled::kStuck:
      return "stuck";
    case TimeCalled::kStartFailures:
      return "start-failures";
    case TimeCalled::kDeadline:
      return "deadline";
    case TimeCalled::kNo:
      break;
  }
  return nullptr;
}

}  // namespace

std::optional<nlohmann::json> died_after_look(const ChildResult& r) {
  if (!r.started || r.exit.signal == 0 || r.sent_sigterm || r.sent_sigkill) return std::nullopt;
  // The first of forkcheck's looks at it in the window before its death: what began it.
  for (const auto& l : r.look_signals) {
    const double after_s = r.duration_s - l.at_s;
    if (l.pid != r.pid || after_s < 0 || after_s > kDeathAfterLookS) continue;
    return nlohmann::json{
        {"pid", r.pid}, {"what", l.what}, {"after_s", after_s}, {"how", r.exit.describe()}};
  }
  return std::nullopt;
}

nlohmann::json process_stall_record(const ProcessStall& p) {
  return {{"pid", p.pid},
          {"ppid", p.ppid},
          {"name", p.name},
          {"threads", p.threads},
          {"since_s", p.since_s},
          {"stuck_s", p.stuck_s},
          {"rest_cpu_share", p.rest_cpu_share},
          {"rest_still", p.rest_still},
          {"wait", p.pause ? "pause, no signal handler" : "futex, private, no timeout"}};
}

nlohmann::json tree_sleep_record(const TreeSleep& s) {
  nlohmann::json r = {{"pid", s.pid},
                      {"tid", s.tid},
                      {"process", s.process},
                      {"wait", s.wait},
                      {"since_s", s.since_s},
                      {"ends_in_s", s.ends_in_s},
                      {"ends_exact", s.ends_exact}};
  if (s.alarm) r["alarm"] = {{"where", s.alarm_where}};
  return r;
}

nlohmann::json watchdog_record(const ChildResult& r) {
  nlohmann::json w = {{"deadline_passed", (r.called_for == TimeCalled::kDeadline)},
                      {"sigterm", r.sent_sigterm},
                      {"sigkill", r.sent_sigkill},
                      {"timeout_s", r.timeout_s},
                      {"leftovers_killed", r.leftovers_killed},
                      {"leftovers_surviving", r.leftovers_surviving},
                      {"group_strangers", r.group_strangers},
                      {"activity",
                       {{"cpu_s", r.tree.cpu_s},
                        {"longest_still_s", r.tree.longest_still_s},
                        {"longest_starved_s", r.tree.longest_starved_s},
                        {"run_queue_s", r.tree.run_queue_s},
                        {"looks", r.tree.looks}}}};
  if (r.hang_after_s > 0) w["hang_after_s"] = r.hang_after_s;
  if (r.attached)
    w["attached"] = {{"pid", r.pid},
                     {"parent_pid", r.attached->parent_pid},
                     {"left_running", r.attached->left_running},
                     {"ended", r.attached->ended},
                     {"running_at_end", r.attached->running_at_end}};
  if (time_was_called(r))
    if (const char* why = called_for(r)) w["called_for"] = why;
  if (r.paused_s > 0) w["paused_s"] = r.paused_s;
  if (r.stuck) w["stuck"] = process_stall_record(*r.stuck);
  if (r.called_for == TimeCalled::kStuck) w["stuck_too_long"] = true;
  if (exited_by_itself(r)) w["exited_by_itself"] = true;
  // forkcheck's own signals to look at processes of the tree: what a death soon after is
  // weighed against.
  if (!r.look_signals.empty()) {
    nlohmann::json looks = nlohmann::json::array();
    for (const auto& l : r.look_signals)
      looks.push_back({{"pid", l.pid}, {"what", l.what}, {"at_s", l.at_s}});
    w["look_signals"] = std::move(looks);
  }
  if (auto died = died_after_look(r)) w["died_after_look"] = std::move(*died);
  if (r.called_after_s >= 0) {
    const TreeFacts& t = r.tree;
    w["tree"] = {{"state", t.blocked   ? "blocked"
                           : t.sleep   ? "sleeping"
                           : t.starved ? "starved"
                                       : "working"},
                 {"starved_s", t.starved_s},
                 {"still_s", t.still_s},
                 {"window_s", t.window_s},
                 {"cpu_s_in_window", t.cpu_s_in_window},
                 {"cpu_s", t.cpu_s},
                 {"processes", t.processes},
                 {"threads", t.threads},
                 {"longest_still_s", t.longest_still_s},
                 {"looks", t.looks},
                 {"waiting_in", t.waiting_in}};
    if (t.sleep) w["tree"]["sleep"] = tree_sleep_record(*t.sleep);
    w["called_after_s"] = r.called_after_s;
    w["deadline_to_end_s"] = r.duration_s - r.called_after_s;
  }
  return w;
}

nlohmann::json step_hang_record(const ChildResult& r) {
  if (!r.step_hang) return nullptr;
  return {{"pid", r.step_hang->pid},
          {"step", r.step_hang->step},
          {"within_s", r.step_hang->within_s},
          {"waited_s", r.step_hang->waited_s}};
}

}  // namespace fc::harness
