// The commands, once: each one's name and summary (forkcheck --help lists them in this order),
// its options, its exit-status footer, and what runs it. main.cc builds the command line from
// this table and runs the command given; the help comes from it, and the man page from the help
// (cmake/man-page.sh). Nothing else lists the commands.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace fc::harness {

struct Command {
  std::string name;
  std::string summary;
  std::function<void(CLI::App& sub)> options;  // its options and its footer
  std::function<int()> run;                    // once the command line was parsed
};

// The commands, their options bound to state the table owns: it must outlive parsing and the
// run. `argv`: forkcheck's whole command line, for the reports.
class CommandTable {
 public:
  explicit CommandTable(std::vector<std::string> argv);
  ~CommandTable();
  CommandTable(const CommandTable&) = delete;
  CommandTable& operator=(const CommandTable&) = delete;

  const std::vector<Command>& commands() const { return commands_; }

  // Adds every command to `app` (its options, its footer), then `forkcheck help`.
  void add_to(CLI::App& app) const;

  // The command `app` parsed, run; a usage error when none was given. Throws what it throws.
  int run(const CLI::App& app) const;

  // "all, run, list, ..., diff or help": the commands, for a message.
  std::string names() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::vector<Command> commands_;
};

}  // namespace fc::harness
