// `forkcheck all` / `forkcheck run`: catalog -> plan -> one supervised child per variant -> run
// log -> reports. Exit status (base/exit_status_codes.h): kOk when every fix variant behaved,
// kFinding on a regression or a failed case, kError when a repro program could not list its
// cases; usage errors are thrown as UsageError before anything is written.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace fc::harness {

struct RunOptions {
  std::vector<std::string> argv;      // the command line, for the report
  std::vector<std::string> case_ids;  // empty: every case
  std::string only;                   // a pattern on "case/variant"
  std::filesystem::path out;          // empty: a new run folder (session/out_dir.h)
  double timeout_s = 60;
  int jobs = 1;
  bool zygote = true;  // fork variants from a preloaded zygote where the platform has one
};

int run_cases(const RunOptions& options);

}  // namespace fc::harness
