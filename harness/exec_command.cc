#include "harness/exec_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <boost/process/search_path.hpp>

#include "harness/classify.h"
#include "harness/run_session.h"
#include "harness/runner.h"
#include "harness/supervisor.h"
#include "harness/usage_error.h"

namespace fc::harness {

std::string resolve_command(const std::string& program) {
  if (program.empty()) throw UsageError("exec: no command given (forkcheck exec -- CMD ARGS...)");
  std::string path = program;
  if (program.find('/') == std::string::npos) {
    path = boost::process::search_path(program).string();
    if (path.empty()) throw UsageError("exec: command not found: " + program);
  }
  if (::access(path.c_str(), X_OK) != 0)
    throw UsageError("exec: cannot execute " + program + ": " + std::strerror(errno));
  return path;
}

int exec_command(const ExecOptions& options) {
  if (options.command.empty()) throw UsageError("exec: no command given (forkcheck exec -- CMD ARGS...)");
  const std::string program = resolve_command(options.command.front());
  prepare_out_dir(options.out);

  std::string shown;
  for (const auto& a : options.command) shown += (shown.empty() ? "" : " ") + a;
  nlohmann::json variant = {{"name", "exec"},
                            {"start_method", "none"},
                            {"role", "subject"},
                            {"expected", "ok"},
                            {"expected_why", "a program that works ends by itself with status 0"},
                            {"description", shown},
                            {"skip_reason", ""}};
  nlohmann::json the_case = {{"id", "exec"},
                             {"title", "forkcheck exec: " + shown},
                             {"source", {{"title", "the user's own command"}, {"author", ""},
                                         {"document", ""}}},
                             {"reported", ""},
                             {"mechanism", ""},
                             {"platforms", ""},
                             {"program", program},
                             {"command", options.command},
                             {"variants", nlohmann::json::array({variant})}};
  RunSession session(options.out, {{"command", "exec"},
                                   {"argv", options.argv},
                                   {"options", {{"timeout_s", options.timeout_s}}}});
  session.add_case(the_case);
  session.set_total(1);

  LaunchSpec spec;
  spec.argv = options.command;
  spec.argv[0] = program;
  spec.timeout_s = options.timeout_s;
  spec.channel = false;  // only the deadline makes a hang: no steps for a plain program
  ChildResult r = supervise(spec);
  if (!r.started) throw UsageError("exec: " + r.start_error);
  Classified c = classify(r, /*expect_result=*/false);
  session.add_result("exec", variant, r, c);
  session.finish(/*interrupted=*/false);
  return c.outcome == Outcome::kOk ? 0 : 1;
}

}  // namespace fc::harness
