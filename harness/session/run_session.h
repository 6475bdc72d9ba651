// One run of forkcheck, as the reports will see it: every case and every variant is recorded as it
// is planned or ends (with a progress line on the terminal), and finish() folds the run's own
// records into the reports. The folder is left as it was until the run really starts (begin(),
// once the plan is made and the environment probed, before the first variant): only then are an
// earlier run's files removed and the run log (run.jsonl) written, with what was recorded so far.
// Shared by `all`/`run` and `exec`.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/supervise/classify.h"
#include "harness/supervise/supervisor.h"
#include "reports/run_log.h"

namespace fc::harness {

class RunSession {
 public:
  // `header`: the run's own fields (command, argv, options); tool, schema and platform are added.
  // `zygotes`, when given, serve the environment probe (see zygote.h).
  // `for_catalog`: the environment from the torch repro program (the catalog's); false, from
  // forkcheck itself (a user's program: its Python side reports what it loads).
  RunSession(const std::filesystem::path& out, nlohmann::json header,
             class Zygotes* zygotes = nullptr, bool for_catalog = true);

  // The run really starts: the files an earlier run left in the folder are removed and the run
  // log is written from here on. Once; finish() calls it when no one did.
  void begin();

  void add_case(const nlohmann::json& planned_case);
  void set_total(size_t variants) { total_ = variants; }
  // Records a variant that ran, or one that was skipped without running.
  void add_result(const std::string& case_id, const nlohmann::json& planned, const ChildResult& r,
                  const Classified& c);
  void add_skip(const std::string& case_id, const nlohmann::json& planned);
  // A variant that forkcheck's interruption cut short: not an outcome of the variant's own.
  void add_interrupted(const std::string& case_id, const nlohmann::json& planned,
                       const ChildResult& r);

  // What was learnt of the environment during the run (exec of a Python program: that
  // interpreter's side, harness/python_facts/python_probe.h), added to the run's environment at the
  // end; the risk notes are drawn again from the whole.
  void add_environment(const nlohmann::json& more);

  // A command that prints more after finish() prints the reports line itself, last.
  void defer_reports_line() { reports_line_last_ = false; }

  // Ends the run log, writes every report, prints the summary; returns the report.
  nlohmann::json finish(bool interrupted);

 private:
  void append(const nlohmann::json& line);
  void append_variant(const nlohmann::json& rec);

  std::filesystem::path out_;
  std::vector<nlohmann::json> held_;      // recorded before begin()
  std::unique_ptr<reports::RunLog> log_;  // from begin() on
  size_t total_ = 0, done_ = 0;
  double started_ = 0;
  bool reports_line_last_ = true;
  nlohmann::json environment_;       // as the header recorded it
  nlohmann::json environment_more_;  // add_environment's, for the end record
};

// The last line a run prints: where its reports are.
void print_reports_line(const std::filesystem::path& out);

}  // namespace fc::harness
