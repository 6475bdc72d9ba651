// The report as types: what report.json holds (reports/report.schema.json), read once from it by
// read_report() and rendered by every format. Member names are the report's keys, so that the
// mapping (report_model_json.cc) is one list per type, tested against the schema.
//
// Reading is lenient, as the formats always were: a report from an older forkcheck or edited by
// hand may lack a field or hold another type there; such a field keeps its default here (an
// absent object: std::nullopt) instead of failing the whole report.
//
// Parts still kept as JSON, each for a reason: a variant's `details` (the case's own data; its
// tables and charts are read by report_view.h), `wait_chain`, `memory`, `python`, `steps`,
// `output_bytes`; the run's `options`, `platform` and `environment` (an open fingerprint).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fc::reports {

// variant.exit: how the variant's own process ended (null: not known, e.g. never started).
struct Exit {
  std::optional<int> code;
  std::optional<int> signal;
  std::string signal_name;
  bool core_dumped = false;
};

// One Python frame of a thread, innermost first (the bootstrap's dump, or CPython's gdb py-bt).
struct PythonFrame {
  std::string file;
  std::optional<int> line;
  std::string function;
  std::string code;  // the source line
};

// One thread of the tree as taken before it was ended (variant.stacks).
struct Thread {
  int pid = 0;
  int tid = 0;
  std::string name;
  std::string state;
  std::string wchan;
  std::string syscall;
  std::vector<std::string> frames;  // native, innermost first
  std::vector<PythonFrame> python;
};

// sleep.alarm: the wait is for the process's own alarm; where the program set it.
struct Alarm {
  std::optional<PythonFrame> where;
};

// watchdog.tree.sleep: the thread whose timed wait ends first.
struct Sleep {
  int pid = 0;
  int tid = 0;
  std::string process;
  std::string wait;
  double since_s = 0;
  double ends_in_s = -1;  // -1: the timeout could not be read
  bool ends_exact = false;
  std::optional<Alarm> alarm;
};

// watchdog.tree: the tree as the supervisor saw it when it called time.
// Its measures are optional where a report that lacks one must not be made to say 0.
struct TreeLook {
  std::string state;  // blocked, sleeping, working, starved, unknown
  std::optional<double> still_s;
  double starved_s = 0;
  std::optional<double> window_s;
  std::optional<double> cpu_s_in_window;
  double cpu_s = 0;
  std::optional<int> processes;
  std::optional<int> threads;
  double longest_still_s = 0;
  int looks = 0;
  std::string waiting_in;
  std::optional<Sleep> sleep;
};

// watchdog.activity: what watching the tree measured, for every variant that ran.
struct Activity {
  double cpu_s = 0;
  double longest_still_s = 0;
  double longest_starved_s = 0;
  double run_queue_s = 0;
  int looks = 0;
};

// A process that could never go on by itself (watchdog.stuck, stall.process).
struct StuckProcess {
  int pid = 0;
  int ppid = 0;
  std::string name;
  int threads = 0;
  double since_s = 0;
  double stuck_s = 0;
  double rest_cpu_share = 0;
  bool rest_still = false;
  std::string wait;
};

// watchdog.attached: a running process forkcheck attach watched.
struct Attached {
  int pid = 0;
  int parent_pid = 0;
  bool left_running = false;
  bool ended = false;
  std::vector<int> running_at_end;
};

// watchdog.look_signals[]: forkcheck signalled a process of the tree to look at it.
struct LookSignal {
  int pid = 0;
  std::string what;
  double at_s = 0;
};

// watchdog.died_after_look: the child died of a signal soon after one of those.
struct DiedAfterLook {
  int pid = 0;
  std::string what;
  double after_s = 0;
  std::string how;
};

// variant.watchdog: what the supervisor did and saw. Every member has its default when the
// variant has no watchdog record.
struct Watchdog {
  bool deadline_passed = false;
  bool sigterm = false;
  bool sigkill = false;
  std::optional<double> timeout_s;
  std::vector<int> leftovers_killed;
  std::vector<int> leftovers_surviving;
  std::vector<int> group_strangers;
  std::optional<Attached> attached;
  std::optional<TreeLook> tree;
  std::optional<Activity> activity;
  std::optional<StuckProcess> stuck;
  bool stuck_too_long = false;
  double paused_s = 0;
  std::optional<double> called_after_s;
  std::string called_for;  // step, stall, stuck, start-failures, deadline; "" when not called
  std::optional<double> hang_after_s;
  bool exited_by_itself = false;
  std::optional<double> deadline_to_end_s;
  std::vector<LookSignal> look_signals;
  std::optional<DiedAfterLook> died_after_look;
};

// variant.hang: a step that stalled.
struct StepHang {
  int pid = 0;
  std::string step;
  std::optional<double> within_s;
  std::optional<double> waited_s;
};

// variant.protocol_error: what the child sent that is not a forkcheck message.
struct ProtocolError {
  std::string line;
  std::string why;
};

// variant.cause: the cause a rule of known shapes found (reports/known_causes.h).
struct Cause {
  std::string rule;
  std::string source;
  std::string cause;
  std::string fix;
  std::string missing;
};

// variant.process_ends: the program's processes that did not exit 0.
struct ProcessEnd {
  int pid = 0;
  std::string what;
  std::string how;
  std::string where;
  std::string why;
};
struct ProcessEndList {
  int count = 0;
  std::vector<ProcessEnd> list;  // the first 100
};
struct ProcessEnds {
  ProcessEndList failed;
  ProcessEndList not_counted;
};

// variant.stall: the first stall while a program was left running, and its stacks then.
struct Stall {
  std::string kind;  // tree, process
  std::optional<StuckProcess> process;
  double after_s = 0;
  double still_s = 0;
  std::string waiting_in;
  int processes = 0;
  int threads = 0;
  std::optional<double> resumed_after_s;
  std::vector<Thread> stacks;
  std::string stacks_method;
  std::string stacks_note;
  std::string stacks_python_note;
};

struct Variant {
  std::string name;
  std::string start_method;  // fork, spawn, forkserver, none
  std::string role;          // hazard, fix, subject
  std::string expected;
  std::string expected_why;
  std::string description;
  std::string skip_reason;
  std::string outcome;
  bool matched = false;
  std::string message;
  std::string note;
  double duration_s = 0;
  Exit exit;
  // "stdout" and "stderr" in the report: those names are macros on Windows.
  std::string stdout_text;
  std::string stderr_text;
  nlohmann::json output_bytes;
  nlohmann::json details = nlohmann::json::object();
  nlohmann::json steps;
  Watchdog watchdog;
  std::optional<StepHang> hang;
  std::optional<ProtocolError> protocol_error;
  std::optional<Cause> cause;
  nlohmann::json wait_chain;
  std::vector<Thread> stacks;
  std::string stacks_method;
  std::optional<int> pid;  // exec and watch: the program's own process
  nlohmann::json memory;
  std::optional<ProcessEnds> process_ends;
  std::string python_note;
  nlohmann::json python;
  std::string stacks_note;
  std::optional<Stall> stall;
  std::string stacks_python_note;
  std::string started_via;  // exec, zygote, attach
  std::string start_note;
  bool harness_error = false;
  bool not_run = false;
  bool interrupted = false;
};

struct Source {
  std::string title;
  std::string author;
  std::string document;
  std::string url;
};

struct NotSelected {
  std::string name;
  std::string role;
};

struct Case {
  std::string id;
  std::string title;
  Source source;
  std::string reported;
  std::string mechanism;
  std::string platforms;
  std::vector<std::string> environment_topics;
  bool featured = false;
  std::string program;
  std::string verdict;
  std::string verdict_reason;
  std::vector<NotSelected> not_selected;
  std::vector<Variant> variants;
};

// report.run: the run's header (command, argv, options, times) and its end.
struct Run {
  std::string schema_version;
  std::string command;
  std::vector<std::string> argv;
  std::string started_at;
  std::string finished_at;
  std::optional<double> duration_s;
  bool interrupted = false;
  bool complete = false;
  nlohmann::json options = nlohmann::json::object();
  nlohmann::json platform = nlohmann::json::object();
  std::vector<std::string> catalog_errors;
  nlohmann::json environment = nlohmann::json::object();
};

struct Summary {
  int cases = 0;
  int variants = 0;
  std::map<std::string, int> by_verdict;
  std::map<std::string, int> by_outcome;
  int mismatches = 0;
  int regressions = 0;
  int harness_failures = 0;
  bool ok = false;
};

struct Tool {
  std::string name;
  std::string version;
};

struct Report {
  std::string schema_version;
  Tool tool;
  Run run;
  std::vector<Case> cases;
  Summary summary;
};

// The model of a report (report.json's content). Never throws on a report's shape.
Report read_report(const nlohmann::json& report);
// One variant's record (a run log's "variant" line, or an element of a case's variants).
Variant read_variant(const nlohmann::json& variant);
std::vector<Thread> read_stacks(const nlohmann::json& stacks);

}  // namespace fc::reports
