// A saved run read back from disk: its report.json, or its run log (run.jsonl) folded as at the
// end of a run. `forkcheck report` renders one again; `forkcheck diff` compares two.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace fc::harness {

// The report held by `path`, whichever of the two kinds it is; throws UsageError when the file
// is missing, unreadable, or neither, or when a field forkcheck reads has another type than
// forkcheck writes (naming it: "cases[0].variants[1]: \"outcome\" is a number (4), not a
// string"). `label` starts each message, naming where the path came from ("--from", "report B").
nlohmann::json load_saved_run(const std::filesystem::path& path,
                              const std::string& label = "--from");

// The file a user means by `path`: a file as it is; in a run folder, its report.json, else its
// run.jsonl; in a folder of run folders (forkcheck-report/), its `latest` run. Throws UsageError,
// starting with `label`, when there is nothing there to read.
std::filesystem::path find_saved_run(const std::filesystem::path& path, const std::string& label);

// Why a saved report (report.json's content) or one line of a run log cannot be read as forkcheck
// wrote it: the first field, among those the fold, the verdicts and the reporters read with a
// type, that has another; "" when none has.
std::string saved_report_problem(const nlohmann::json& report);
std::string run_log_line_problem(const nlohmann::json& line);

}  // namespace fc::harness
