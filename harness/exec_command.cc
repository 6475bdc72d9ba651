#include "harness/exec_command.h"

#include <filesystem>

#include "harness/host.h"
#include "harness/interrupt.h"
#include "harness/runner.h"
#include "harness/subject_command.h"
#include "harness/usage_error.h"

namespace fc::harness {

std::string resolve_command(const std::string& program, const std::string& subcommand) {
  if (program.empty())
    throw UsageError(subcommand + ": no command given (forkcheck " + subcommand + " -- CMD ARGS...)");
  std::string path = program;
  if (!std::filesystem::path(program).has_parent_path()) {  // a bare name: look in PATH
    path = find_in_path(program);
    if (path.empty()) throw UsageError(subcommand + ": command not found: " + program);
  }
  std::string why;
  if (!is_executable_file(path, why))
    throw UsageError(subcommand + ": cannot execute " + program + ": " + why);
  return path;
}

int exec_command(const ExecOptions& options) {
  if (options.command.empty()) throw UsageError("exec: no command given (forkcheck exec -- CMD ARGS...)");
  SubjectCommand subject;
  subject.name = "exec";
  subject.argv = options.argv;
  subject.command = options.command;
  subject.out = options.out;
  subject.timeout_s = options.timeout_s;
  const std::string program = resolve_command(options.command.front());
  prepare_out_dir(options.out);
  SubjectResult done = run_subject(subject, program);
  if (done.interrupted) return interrupted_exit_status();
  return done.classified.outcome == Outcome::kOk ? 0 : 1;
}

}  // namespace fc::harness
