// The command line around the commands: `forkcheck help [COMMAND]`, and the one-line usage
// error that names a misspelt command or option and the closest real one ("did you mean").
// main.cc builds the CLI11 app from the command table (command_table.h); these read it.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace fc::harness {

// `forkcheck help` and `forkcheck help COMMAND` become `forkcheck --help` and `forkcheck COMMAND
// --help` in `args` (argv, program name first), so that each prints exactly what the other does.
// Also catches a misspelt command before CLI11 sees it (`forkcheck exce`, `forkcheck help exce`).
// Returns the usage error ("" when the arguments may be parsed): "unknown command exce: did you
// mean exec? (the commands: ...)".
std::string rewrite_help_and_check_command(const CLI::App& app, std::vector<std::string>& args);

// After CLI11 refused `args`: the first option no command has, named with the command's closest
// options ("exec: unknown option --timout: did you mean --timeout?"), or "" when every option is
// known (CLI11's own message says what else is wrong).
std::string explain_unknown_option(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace fc::harness
