#include "harness/commands/exec_command.h"

#include "harness/session/out_dir.h"
#include "harness/session/program_lookup.h"

#include <filesystem>

#include "harness/base/exit_status_codes.h"
#include "harness/base/usage_error.h"
#include "harness/platform/host.h"
#include "harness/session/subject_command.h"
#include "harness/supervise/interrupt.h"
#include "harness/watch/worker_home.h"

namespace fc::harness {

int exec_command(const ExecOptions& options) {
  if (options.command.empty())
    throw UsageError("exec: no command given (forkcheck exec -- CMD ARGS...)");
  SubjectCommand subject;
  subject.name = "exec";
  subject.argv = options.argv;
  subject.command = options.command;

  subject.timeout_s = options.timeout_s;
  subject.live = options.live;
  const std::string program = resolve_command(options.command.front());
  subject.out = make_out_dir(options.out, "exec");
  // What the finding's advice to use spawn or forkserver rests on (worker_home.h).
  subject.annotate = [](const ChildResult& r, nlohmann::json& details, std::string&) {
    add_start_method_facts(r, details);
  };
  SubjectResult done = run_subject(subject, program);
  if (done.interrupted) return interrupted_exit_status();
  // The report's verdict: the program, and every process of it the bootstrap heard of.
  return done.classified.outcome == Outcome::kOk && done.descendants_failure.empty()
             ? exit_status::kOk
             : exit_status::kFinding;
}

}  // namespace fc::harness
