// A saved run read back from disk: its report.json, or its run log (run.jsonl) folded as at the
// end of a run. `forkcheck report` renders one again; `forkcheck diff` compares two.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace fc::harness {

// The report held by `path`, whichever of the two kinds it is; throws UsageError when the file
// is missing, unreadable, or neither. `label` starts each message, naming where the path came
// from ("--from", "report B").
nlohmann::json load_saved_run(const std::filesystem::path& path,
                              const std::string& label = "--from");

// The file a user means by `path`: a file as it is; in a run folder, its report.json, else its
// run.jsonl; in a folder of run folders (forkcheck-report/), its `latest` run. Throws UsageError,
// starting with `label`, when there is nothing there to read.
std::filesystem::path find_saved_run(const std::filesystem::path& path, const std::string& label);

}  // namespace fc::harness
