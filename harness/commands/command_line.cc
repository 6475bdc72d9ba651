#include "harness/commands/command_line.h"

#include <algorithm>
#include <cstddef>

#include <CLI/CLI.hpp>

#include "harness/base/did_you_mean.h"

namespace fc::harness {
namespace {

bool is_option(const std::string& arg) { return arg.size() > 1 && arg[0] == '-'; }

const CLI::App* find_command(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (sub->get_name() == name) return sub;
  return nullptr;
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string unknown_command(const CLI::App& app, const std::string& name) {
  const auto names = command_names(app);
  const std::string guess = did_you_mean(closest_names(name, names));
  return "unknown command " + name + (guess.empty() ? "" : ": " + guess) +
         " (the commands: " + joined(names) + ")";
}

// The option of `app` that `arg` names ("--out", "--out=x", "-j", "-j4"), or null.
const CLI::Option* find_option(const CLI::App& app, const std::string& arg) {
  const bool is_long = arg.rfind("--", 0) == 0;
  const std::string name = is_long ? arg.substr(2, arg.find('=') - 2) : arg.substr(1, 1);
  for (const CLI::Option* opt : app.get_options()) {
    const auto& names = is_long ? opt->get_lnames() : opt->get_snames();
    if (std::find(names.begin(), names.end(), name) != names.end()) return opt;
  }
  return nullptr;
}

// An option that takes a value and was given without one in the same argument ("--out DIR", not
// "--out=DIR" or "-j4"): the next argument is its value.
bool value_follows(const CLI::Option* opt, const std::string& arg) {
  if (opt->get_type_size_max() <= 0) return false;  // a flag
  if (arg.rfind("--", 0) == 0) return arg.find('=') == std::string::npos;
  return arg.size() == 2;
}

std::string unknown_option(const CLI::App& app, const std::string& where, const std::string& arg) {
  // "-timeout" is most likely "--timeout" with a dash lost: compare the whole word.
  const std::string typed = arg.rfind("--", 0) == 0 ? arg.substr(2, arg.find('=') - 2)
                            : arg.size() > 2        ? arg.substr(1)
                                                    : arg.substr(1, 1);
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options())
    for (const auto& n : opt->get_lnames()) names.push_back(n);
  std::vector<std::string> shown;
  for (const auto& n : closest_names(typed, names)) shown.push_back("--" + n);
  const std::string guess = did_you_mean(shown);
  const std::string name = arg.substr(0, arg.find('='));
  return where + "unknown option " + name + (guess.empty() ? "" : ": " + guess) + " (forkcheck " +
         (where.empty() ? "" : app.get_name() + " ") + "--help)";
}

}  // namespace

std::string rewrite_help_and_check_command(const CLI::App& app, std::vector<std::string>& args) {
  // The command is the first argument that is not an option: forkcheck's own options (--help,
  // --version) take no value.
  size_t at = 1;
  for (; at < args.size() && is_option(args[at]) && args[at] != "--"; ++at)
    if (find_option(app, args[at]) == nullptr) return "";  // `forkcheck --out D all`: named later
  if (at >= args.size() || args[at] == "--") return "";
  const std::string command = args[at];
  if (command != "help") {
    if (find_command(app, command) == nullptr) return unknown_command(app, command);
    return "";
  }
  std::vector<std::string> rest(args.begin() + static_cast<std::ptrdiff_t>(at) + 1, args.end());
  if (rest.size() > 1) return "help: one command at most (forkcheck help [COMMAND])";
  std::vector<std::string> rewritten(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(at));
  if (!rest.empty() && rest[0] != "--help" && rest[0] != "-h") {
    const std::string& topic = rest[0];
    if (is_option(topic) || find_command(app, topic) == nullptr)
      return "help: " + unknown_command(app, topic);
    rewritten.push_back(topic);
  }
  rewritten.push_back("--help");
  args = std::move(rewritten);
  return "";
}

std::string explain_unknown_option(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* in = &app;
  bool command_seen = false, positional_seen = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") break;  // what follows is the command's own (exec, watch)
    if (!is_option(arg)) {
      if (!command_seen) {
        in = find_command(app, arg);
        if (in == nullptr) return unknown_command(app, arg);
        command_seen = true;
      } else {
        positional_seen = true;
      }
      continue;
    }
    const CLI::Option* opt = find_option(*in, arg);
    if (opt == nullptr) {
      const std::string where = command_seen ? in->get_name() + ": " : "";
      // `forkcheck exec CMD --flag`: the command's own options belong after --.
      if (positional_seen && in->get_option_no_throw("command") != nullptr)
        return where + arg.substr(0, arg.find('=')) + " is not an option of " + in->get_name() +
               "; the command and its arguments go after --: forkcheck " + in->get_name() +
               " [OPTIONS] -- CMD ARGS...";
      // `forkcheck --out D all`: an option of a command, given before it.
      std::vector<std::string> owners;
      if (!command_seen)
        for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
          if (find_option(*sub, arg) != nullptr) owners.push_back(sub->get_name());
      if (!owners.empty())
        return arg.substr(0, arg.find('=')) + " is an option of " + joined(owners) +
               ": it goes after the command (forkcheck " + owners.front() + " " +
               arg.substr(0, arg.find('=')) + " ...)";
      return unknown_option(*in, where, arg);
    }
    if (value_follows(opt, arg)) ++i;
  }
  return "";
}

}  // namespace fc::harness
