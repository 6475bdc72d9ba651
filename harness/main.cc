// forkcheck: reproduces the fork-safety failures of multiprocessing PyTorch programs, one process
// per case under a watchdog, and shows the fixed behaviour under spawn and forkserver.
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "harness/base/exit_status_codes.h"
#include "harness/base/usage_error.h"
#include "harness/commands/command_line.h"
#include "harness/commands/command_table.h"
#include "harness/supervise/guardian.h"
#include "harness/supervise/interrupt.h"
#include "harness/supervise/own_process.h"
#include "harness/supervise/supervisor.h"
#include "harness/version.h"
#include "reports/text.h"

namespace {

// Messages may quote the command line or a child's output: escaped for the terminal.
int usage_error(const std::string& what) {
  std::cerr << "forkcheck: error: " << fc::reports::terminal_safe(what) << "\n";
  return fc::harness::exit_status::kUsage;
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything changes them: what every child of ours gets back (supervise/supervisor.h).
  fc::harness::record_inherited_signals();
  // A closed stdout (`forkcheck all | head -1`) fails a write; it never ends the run.
  fc::harness::ignore_sigpipe();
  // Started with a standard descriptor closed, the next pipe or socket would take its number and
  // a stray write to it would corrupt the supervisor's plumbing: /dev/null takes the place.
  fc::harness::open_closed_stdio();
  // A tree of thousands of processes is held by a pidfd each: room for them (the children get
  // the limit forkcheck was started with back).
  fc::harness::raise_descriptor_limit();
  // forkcheck starts no child but through the supervisor: every child of its process is a tree's.
  fc::harness::claim_every_child();
  // The guardian, once started, is waited for whichever way main() returns: nothing forkcheck
  // started outlives it.
  struct StopHelpers {
    ~StopHelpers() { fc::harness::stop_guardian(); }
  } stop_helpers;
  CLI::App app{"forkcheck: fork-safety failures of multiprocessing PyTorch programs, reproduced"};
  app.set_version_flag("--version", fc::harness::kVersion);
  app.require_subcommand(0, 1);  // checked after parsing, so a bad flag is named first
  const fc::harness::CommandTable commands(std::vector<std::string>(argv, argv + argc));
  commands.add_to(app);
  // After the commands: a subcommand takes its parent's footer when it is made.
  app.footer(fc::harness::exit_status::kHelpTable);

  // `help [COMMAND]` becomes --help, a misspelt command is named with the closest ones; after a
  // refusal, a misspelt option likewise.
  std::vector<std::string> args(argv, argv + argc);
  if (const std::string bad = fc::harness::rewrite_help_and_check_command(app, args); !bad.empty())
    return usage_error(bad);
  std::vector<const char*> arg_pointers;
  for (const auto& a : args) arg_pointers.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(arg_pointers.size()), arg_pointers.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    const std::string unknown = fc::harness::explain_unknown_option(app, args);
    return usage_error(unknown.empty() ? e.what() : unknown);
  }

  try {
    return commands.run(app);
  } catch (const fc::harness::UsageError& e) {
    return usage_error(e.what());
  } catch (const std::exception& e) {
    std::cerr << "forkcheck: " << fc::reports::terminal_safe(e.what()) << "\n";
    return fc::harness::exit_status::kError;
  }
}
