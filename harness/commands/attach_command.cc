#include "harness/commands/attach_command.h"

#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <system_error>

#include "harness/base/exit_status_codes.h"
#include "harness/base/usage_error.h"
#include "harness/platform/host.h"
#include "harness/platform/install_layout.h"
#include "harness/platform/process_info.h"
#include "harness/session/out_dir.h"
#include "harness/supervise/interrupt.h"
#include "launch/process_tree.h"

#ifdef __linux__
#include "harness/supervise/python_channel.h"
#endif

namespace fc::harness {

#ifdef __linux__
namespace {

// forkcheck's own process and its ancestors: a tree that holds forkcheck cannot be watched by it
// (its own looks and debuggers would be the tree's activity).
std::set<ProcessId> own_line() {
  std::set<ProcessId> line;
  for (ProcessId p = current_process_id(); p > 0 && line.insert(p).second;) {
    const auto f = launch::process_facts(p);
    if (!f) break;
    p = f->ppid;
  }
  return line;
}

}  // namespace
#endif

#ifndef __linux__
std::string attach_env_lines() {
  throw UsageError("attach --env: forkcheck attach needs Linux's /proc; not on this platform");
}

int attach_command(const AttachOptions&) {
  throw UsageError(
      "attach: watching a running process needs Linux's /proc; it is not available "
      "on this platform (forkcheck exec is)");
}
#else
namespace {

// A word for sh, whatever it holds.
std::string sh_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string attach_env_lines() {
  const PartLookup bootstrap = find_python_bootstrap();
  if (bootstrap.found.empty())
    throw UsageError("attach --env: forkcheck's Python bootstrap was not found (looked at " +
                     bootstrap.looked_text() + ")");
  std::string lines =
      "# forkcheck attach reads this job's Python frames through each process's own files.\n"
      "# Until it asks, a Python process only makes two anonymous files: nothing is sent.\n"
      "export PYTHONPATH=" +
      sh_quoted(bootstrap.found.string()) + "\"${PYTHONPATH:+:$PYTHONPATH}\"\n" +
      "export FORKCHECK_PY_ATTACHABLE=" + std::to_string(PythonChannel::dump_signal()) + "\n";
  if (const std::string kept = python_bytecode_folder(); !kept.empty())
    lines += "export FORKCHECK_PY_BYTECODE=" + sh_quoted(kept) + "\n";
  return lines;
}

int attach_command(const AttachOptions& options) {
  if (options.print_env) {
    if (options.pid != 0) throw UsageError("attach: --env takes no pid");
    std::fputs(attach_env_lines().c_str(), stdout);
    return exit_status::kOk;
  }
  if (options.pid == 0) throw UsageError("attach: a pid is required (or --env)");
  const std::string pid = std::to_string(options.pid);
  const auto facts = launch::process_facts(options.pid);
  if (options.pid <= 0 || !facts || facts->zombie())
    throw UsageError("attach: no running process " + pid);
  if (own_line().count(options.pid))
    throw UsageError("attach: pid " + pid +
                     " is forkcheck itself or one of its ancestors: its tree holds forkcheck");
  SubjectCommand subject;
  subject.name = "attach";
  subject.argv = options.argv;
  subject.command = process_command_line(options.pid);
  if (subject.command.empty()) subject.command = {facts->name};
  subject.attach_pid = options.pid;
  subject.attach_start_time = facts->start_time;
  subject.kill_on_hang = options.kill_on_hang;
  subject.timeout_s = options.timeout_s;
  subject.live.hang_after_s = options.hang_after_s;
  subject.live.quiet = true;  // its output is not forkcheck's to read
  subject.out = make_out_dir(options.out, "attach");
  std::error_code ec;
  std::string program = std::filesystem::read_symlink("/proc/" + pid + "/exe", ec).string();
  if (ec || program.empty()) program = subject.command.front();
  SubjectResult done = run_subject(subject, program);
  if (done.interrupted) return interrupted_exit_status();
  return done.classified.outcome == Outcome::kOk ? exit_status::kOk : exit_status::kFinding;
}

#endif

}  // namespace fc::harness
