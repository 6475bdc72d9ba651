// The forkcheck command line: bad input gets one line naming the problem and exit status 2, and
// nothing is written.
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "harness/base/did_you_mean.h"
#include "harness/supervise/supervisor.h"
#include "read_text.h"

extern char** environ;

namespace fc::harness {
namespace {

namespace fs = std::filesystem;

struct Run {
  int code;
  std::string err, out;
};

Run forkcheck(std::vector<std::string> args,
              std::vector<std::pair<std::string, std::string>> env = {}) {
  LaunchSpec spec;
  spec.argv = {FC_FORKCHECK};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = std::move(env);
  spec.timeout_s = 120;
  spec.channel = false;
  auto r = supervise(spec);
  return {r.exit.code, r.err.text(), r.out.text()};
}

void expect_usage_error(const Run& r, const std::string& names) {
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(names), std::string::npos) << r.err;
  // one line
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

fs::path fresh_dir(const std::string& name) {
  auto d =
      fs::temp_directory_path() / ("forkcheck-cli-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

// A locale the user names but the machine has not installed (many containers: LANG=en_US.UTF-8
// without its files) is no crash: Boost.Process's PATH search would throw from std::locale("").
TEST(Cli, ALocaleThatIsNotInstalledIsNoCrash) {
  const std::vector<std::pair<std::string, std::string>> env = {{"LC_ALL", "xx_YY.UTF-8"}};
  const auto list = forkcheck({"list"}, env);
  EXPECT_EQ(list.code, 0) << list.err;
  const auto out = std::filesystem::temp_directory_path() /
                   ("forkcheck-cli-locale-" + std::to_string(::getpid()));
  const auto exec = forkcheck({"exec", "--quiet", "--out", out.string(), "--", "true"}, env);
  EXPECT_EQ(exec.code, 0) << exec.err;
  EXPECT_EQ(exec.err.find("locale"), std::string::npos) << exec.err;
  std::filesystem::remove_all(out);
}

TEST(Cli, UnknownFlag) { expect_usage_error(forkcheck({"all", "--bogus"}), "--bogus"); }

TEST(Cli, NoCommand) { expect_usage_error(forkcheck({}), "command"); }

// The commands are listed once (harness/commands/command_table.cc): the help lists each, and so
// do the error without a command, the man page (install.*) and `help COMMAND`.
TEST(Cli, EveryCommandIsInTheHelpTheErrorAndItsOwnHelp) {
  const auto help = forkcheck({"--help"});
  ASSERT_EQ(help.code, 0) << help.err;
  std::vector<std::string> listed;
  std::istringstream in(help.out.substr(help.out.find("Subcommands:")));
  for (std::string line; std::getline(in, line) && (listed.empty() || line.rfind("  ", 0) == 0);)
    if (line.rfind("  ", 0) == 0 && line.size() > 2 && line[2] != ' ')
      listed.push_back(line.substr(2, line.find(' ', 2) - 2));
  for (const char* c : {"all", "run", "list", "exec", "watch", "matrix", "attach", "bench", "env",
                        "report", "diff", "help"})
    EXPECT_NE(std::find(listed.begin(), listed.end(), c), listed.end()) << c << "\n" << help.out;
  const auto none = forkcheck({});
  EXPECT_EQ(none.code, 2);
  for (const auto& c : listed) {
    EXPECT_NE(none.err.find(c), std::string::npos) << c << ": " << none.err;
    if (c == "help") continue;
    const auto own = forkcheck({"help", c});
    EXPECT_EQ(own.code, 0) << c << ": " << own.err;
    EXPECT_NE(own.out.find("Exit status"), std::string::npos) << c << "\n" << own.out;
  }
}

TEST(Cli, NegativeTimeout) {
  expect_usage_error(forkcheck({"all", "--timeout", "-1"}), "--timeout");
}

TEST(Cli, AbsurdTimeout) {
  expect_usage_error(forkcheck({"all", "--timeout", "1e9"}), "--timeout");
}

TEST(Cli, TimeoutThatIsNotANumber) {
  expect_usage_error(forkcheck({"all", "--timeout", "soon"}), "--timeout");
}

// --timeout takes a finite number of seconds, from 0.5 to a day, for every command that has it:
// NaN would be a deadline that never passes (CLI11's Range lets it through).
TEST(Cli, TimeoutMustBeAFinitePositiveNumberOfSeconds) {
  auto out = fresh_dir("timeout");
  for (const std::string command : {"all", "run", "exec", "watch"}) {
    for (const std::string value : {"nan", "NaN", "-nan", "inf", "-inf", "infinity", "0", "-0",
                                    "0.0", "-1", "1e9", "86400.5"}) {
      std::vector<std::string> args = {command, "--out", out.string(), "--timeout=" + value};
      if (command == "run") args.push_back("gomp-fork-hang");
      if (command == "exec" || command == "watch") args.insert(args.end(), {"--", "/bin/true"});
      SCOPED_TRACE(command + " --timeout=" + value);
      const auto r = forkcheck(args);
      expect_usage_error(r, "--timeout");
      EXPECT_NE(r.err.find(value + " is not"), std::string::npos) << "names the value: " << r.err;
      EXPECT_FALSE(fs::exists(out)) << "nothing written";
    }
  }
  // The value as a separate argument, as most people type it.
  const auto r = forkcheck({"exec", "--timeout", "nan", "--out", out.string(), "--", "/bin/true"});
  expect_usage_error(r, "--timeout: nan is not");
  EXPECT_FALSE(fs::exists(out));
}

// Bad input is found before the out folder is touched: an earlier run's files stay as they were
// (a run removes them when it starts: harness/session/run_session.cc).
TEST(Cli, BadInputLeavesTheEarlierRunsFilesAlone) {
  auto out = fresh_dir("earlier");
  fs::create_directories(out);
  const std::vector<std::string> files = {"run.jsonl", "report.json", "report.html", "junit.xml",
                                          "summary.md"};
  for (const auto& f : files) std::ofstream(out / f) << "earlier run\n";
  const std::string o = out.string();
  // (A file that is there but that execve() refuses is no bad input: it gets a report of its own,
  // exec_test.cc.)
  std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"exec", "--out", o, "--", "/tmp"}, "directory"},
      {{"run", "no-such-case", "--out", o}, "no-such-case"},
      {{"all", "--only", "zzz-nothing", "--out", o}, "zzz-nothing"},
      {{"all", "--timeout", "nan", "--out", o}, "--timeout"},
      {{"exec", "--out", o, "--", "/nonexistent/forkcheck-x"}, "/nonexistent/forkcheck-x"},
      {{"exec", "--out", o}, "command"},
      {{"watch", "--out", o, "--", "/nonexistent/forkcheck-x"}, "/nonexistent/forkcheck-x"},
      {{"watch", "--timeout", "0", "--out", o, "--", "/bin/true"}, "--timeout"},
  };
  for (const auto& [args, names] : bad) {
    SCOPED_TRACE(args[0] + " ... " + names);
    expect_usage_error(forkcheck(args), names);
    for (const auto& f : files) {
      std::ifstream in(out / f);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      EXPECT_EQ(text, "earlier run\n") << f;
    }
  }
  fs::remove_all(out);
}

TEST(Cli, UnknownCaseWritesNothing) {
  auto out = fresh_dir("unknown");
  expect_usage_error(forkcheck({"run", "no-such-case", "--out", out.string()}), "no-such-case");
  EXPECT_FALSE(fs::exists(out / "run.jsonl"));
  EXPECT_FALSE(fs::exists(out / "report.json"));
  fs::remove_all(out);
}

TEST(Cli, OnlyThatSelectsNothing) {
  auto out = fresh_dir("only");
  expect_usage_error(forkcheck({"all", "--only", "zzz-nothing", "--out", out.string()}),
                     "zzz-nothing");
  EXPECT_FALSE(fs::exists(out / "run.jsonl"));
  fs::remove_all(out);
}

TEST(Cli, OutThatCannotBeCreated) {
  expect_usage_error(forkcheck({"all", "--out", "/proc/forkcheck/cannot"}),
                     "/proc/forkcheck/cannot");
}

TEST(Cli, OutThatIsAFile) {
  auto file = fresh_dir("file");
  { std::ofstream(file.string()) << "x"; }
  expect_usage_error(forkcheck({"all", "--out", file.string()}), file.string());
  fs::remove(file);
}

// A repro program's catalog is not the user's input: valid JSON of the wrong type (a number where
// an array is expected, an id that is a number, a string where an object is expected) is said in
// one line naming the program, the case and the field, that case is left out, the other
// program's cases go on, and forkcheck exits 1 (its own failure), never with a raw nlohmann
// exception.
TEST(Cli, CatalogOfTheWrongTypesIsNamedInOneLineAndLeftOut) {
  const auto dir = fresh_dir("catalog");
  fs::create_directories(dir);
  fs::create_symlink(fs::path(FC_FORKCHECK).parent_path() / "forkcheck-repro",
                     dir / "forkcheck-repro");
  std::ofstream(dir / "forkcheck-repro-torch")
      << "#!/bin/sh\n[ \"$1\" = --list ] && exec printf '%s\\n' \"$FAKE_CATALOG\"\n"
      << "echo \"$1: not served here\" >&2\nexit 3\n";
  fs::permissions(dir / "forkcheck-repro-torch", fs::perms::owner_all);
  const std::string source = R"("title":"t","source":{"title":"a","author":"b","document":"c"})";
  const std::string variant =
      R"("name":"fork","start_method":"fork","role":"hazard","expected":"hang","expected_why":"w")";
  const std::vector<std::pair<std::string, std::string>> wrong = {
      {R"({"cases":3})", R"("cases" is a number (3), not an array)"},
      {R"({"cases":["oops"]})", R"(case 1: it is a string ("oops"), not an object)"},
      {R"({"cases":[{"id":7,)" + source + R"(,"variants":[]}]})", R"("id" is a number (7))"},
      {R"({"cases":[{"id":"x",)" + source + R"(,"variants":3}]})",
       R"(case 1 (x): "variants" is a number (3), not an array)"},
      {R"({"cases":[{"id":"x","title":"t","source":"s","variants":[]}]})",
       R"(case 1 (x): "source" is a string ("s"), not an object)"},
      {R"({"cases":[{"id":"x",)" + source + R"(,"variants":["fork"]}]})",
       R"(case 1 (x): variant 1: is a string ("fork"), not an object)"},
      {R"({"cases":[{"id":"x",)" + source + R"(,"variants":[{)" + variant +
           R"(,"env":{"A":1}}]}]})",
       R"(variant 1: "env" has A as a number (1), not a string)"},
      {R"({"cases":[{"id":"x",)" + source + R"(,"variants":[{)" + variant + R"(,"role":3}]}]})",
       R"(variant 1: "role" is a number (3), not a string)"},
  };
  for (const auto& [catalog, names] : wrong) {
    SCOPED_TRACE(catalog);
    const std::vector<std::pair<std::string, std::string>> env = {
        {"FORKCHECK_REPRO_DIR", dir.string()}, {"FAKE_CATALOG", catalog}};
    const auto r = forkcheck({"list"}, env);
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
    EXPECT_NE(r.err.find("forkcheck-repro-torch --list: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(names), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("gomp-fork-hang"), std::string::npos) << "the other program's cases";
  }
  // Asked for by name, a case left out is forkcheck's failure (1), not an unknown case (2).
  const std::vector<std::pair<std::string, std::string>> env = {
      {"FORKCHECK_REPRO_DIR", dir.string()},
      {"FAKE_CATALOG", R"({"cases":[{"id":"x",)" + source + R"(,"variants":3}]})"}};
  const auto out = dir / "out";
  const auto named = forkcheck({"run", "x", "--out", out.string()}, env);
  EXPECT_EQ(named.code, 1) << named.err;
  EXPECT_NE(named.err.find("cannot run x: its repro program's catalog entry was left out"),
            std::string::npos)
      << named.err;
  EXPECT_FALSE(fs::exists(out / "report.json"));
  // A run goes on with the cases that are there, and its report says what was left out.
  const auto run =
      forkcheck({"run", "gomp-fork-hang", "--only", "spawn", "--out", out.string()}, env);
  EXPECT_EQ(run.code, 1) << run.err;
  EXPECT_EQ(run.err.find("json.exception"), std::string::npos) << run.err;
  std::ifstream in(out / "report.json");
  const std::string report((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(report.find(R"(case 1 (x): \"variants\" is a number (3), not an array)"),
            std::string::npos)
      << "run.catalog_errors";
  fs::remove_all(dir);
}

TEST(Cli, ListShowsTheCases) {
  auto r = forkcheck({"list"});
  EXPECT_EQ(r.code, 0) << r.err;
  for (const char* id : {"gomp-fork-hang", "autograd-after-fork", "tiny-nn-spawn"})
    EXPECT_NE(r.out.find(id), std::string::npos) << id;
  // The variant lines' columns line up, the longest names included: "expects" starts at the
  // same column on every one of them.
  std::istringstream lines(r.out);
  std::string line;
  size_t column = std::string::npos, variant_lines = 0;
  while (std::getline(lines, line)) {
    const size_t at = line.find(" expects ");
    if (at == std::string::npos) continue;
    ++variant_lines;
    if (column == std::string::npos) column = at;
    EXPECT_EQ(at, column) << line;
  }
  EXPECT_GT(variant_lines, 40u);
}

// --json: the same cases, for a tool.
TEST(Cli, ListJsonHasTheCases) {
  auto r = forkcheck({"list", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out.substr(0, 2000);
  EXPECT_TRUE(j["errors"].is_array() && j["errors"].empty()) << j["errors"];
  std::vector<std::string> ids;
  for (const auto& c : j["cases"]) {
    ids.push_back(c.value("id", ""));
    for (const char* key : {"title", "source", "platforms", "variants"})
      EXPECT_TRUE(c.contains(key)) << key;
    for (const auto& v : c["variants"])
      for (const char* key : {"name", "start_method", "role", "expected"})
        EXPECT_TRUE(v.contains(key)) << key;
  }
  for (const char* id : {"gomp-fork-hang", "autograd-after-fork", "tiny-nn-spawn"})
    EXPECT_NE(std::find(ids.begin(), ids.end(), id), ids.end()) << id;
}

// Whose torch: the libtorch the torch cases run against, as the torch program says (the file it
// maps), and the Python torch found beside it, in --json and in the text's closing lines.
TEST(Cli, ListSaysWhichLibtorchTheTorchCasesRunAgainst) {
  auto r = forkcheck({"list", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j["libtorch"].is_object()) << j["libtorch"];
  const std::string library = j["libtorch"].value("library", "");
  EXPECT_NE(library.find("libtorch_cpu"), std::string::npos) << library;
  EXPECT_TRUE(fs::exists(library)) << library;
  EXPECT_FALSE(j["libtorch"].value("version", "").empty());
  ASSERT_TRUE(j["python_torch"].is_object());
  EXPECT_FALSE(j["python_torch"].value("status", "").empty()) << j["python_torch"];
  auto text = forkcheck({"list"});
  EXPECT_NE(text.out.find("whose torch\n  libtorch: " + j["libtorch"].value("version", "") + " (" +
                          library + "): the torch cases run against it"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("\n  Python: "), std::string::npos) << text.out;
}

// `forkcheck list CASE`: a page with everything the catalog says of the case, every variant
// with what it does and why its expectation holds here.
TEST(Cli, ListOfACaseIsItsPage) {
  auto json_run = forkcheck({"list", "--json", "gomp-fork-hang"});
  ASSERT_EQ(json_run.code, 0) << json_run.err;
  const auto j = nlohmann::json::parse(json_run.out, nullptr, false);
  ASSERT_TRUE(j.is_object() && j["cases"].size() == 1u) << json_run.out.substr(0, 500);
  const auto& c = j["cases"][0];
  EXPECT_EQ(c["id"], "gomp-fork-hang");
  auto r = forkcheck({"list", "gomp-fork-hang"});
  ASSERT_EQ(r.code, 0) << r.err;
  // Words as the page wraps them: compare with the spaces and line breaks taken out.
  auto flat = [](std::string s) {
    s.erase(std::remove_if(s.begin(), s.end(), [](char ch) { return ch == ' ' || ch == '\n'; }),
            s.end());
    return s;
  };
  const std::string page = flat(r.out);
  EXPECT_EQ(r.out.rfind("gomp-fork-hang: ", 0), 0u) << r.out;
  for (const char* key : {"reported", "mechanism", "platforms"})
    EXPECT_NE(page.find(flat(c[key].get<std::string>())), std::string::npos) << key;
  EXPECT_NE(page.find(flat(c["source"]["title"].get<std::string>())), std::string::npos);
  for (const auto& v : c["variants"]) {
    EXPECT_NE(page.find(flat(v["name"].get<std::string>() + " (")), std::string::npos) << v["name"];
    const std::string why =
        (v["expected"] == "skip" ? v["skip_reason"] : v["expected_why"]).get<std::string>();
    EXPECT_NE(page.find(flat(why)), std::string::npos) << v["name"];
  }
  EXPECT_EQ(r.out.find("autograd-after-fork"), std::string::npos) << "that case alone";
}

TEST(Cli, ListOrRunOfAMisspeltCaseNamesTheClosest) {
  for (const char* command : {"list", "run"}) {
    auto r = forkcheck({command, "gomp-fork-hnag"});
    expect_usage_error(r, "unknown case 'gomp-fork-hnag': did you mean gomp-fork-hang?");
  }
}

// The help, the man page (made from it) and the docs agree: every command --help lists has its
// line in docs/commands.md's table, which the README points to, and no line there names a
// command the help does not have.
TEST(Cli, DocsListEveryCommandTheHelpDoesAndNoOther) {
  const auto top = forkcheck({"--help"});
  ASSERT_EQ(top.code, 0);
  std::vector<std::string> commands;
  std::istringstream lines(top.out.substr(top.out.find("Subcommands:")));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line) && line.rfind("  ", 0) == 0) {
    const std::string name = line.substr(2, line.find(' ', 2) - 2);
    if (name != "help") commands.push_back(name);
  }
  ASSERT_GE(commands.size(), 10u) << top.out;
  std::ifstream in(std::string(FC_SOURCE_DIR) + "/docs/commands.md");
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string table = doc.substr(0, doc.find("```", doc.find("```") + 3));
  for (const auto& c : commands)
    EXPECT_NE(table.find("\nforkcheck " + c + " "), std::string::npos)
        << c << " in docs/commands.md";
  std::istringstream doc_lines(table);
  while (std::getline(doc_lines, line))
    if (line.rfind("forkcheck ", 0) == 0) {
      const std::string name = line.substr(10, line.find(' ', 10) - 10);
      EXPECT_NE(std::find(commands.begin(), commands.end(), name), commands.end())
          << "docs/commands.md names " << name << ", which --help does not list";
    }
  std::ifstream readme_in(std::string(FC_SOURCE_DIR) + "/README.md");
  const std::string readme((std::istreambuf_iterator<char>(readme_in)),
                           std::istreambuf_iterator<char>());
  EXPECT_NE(readme.find("docs/commands.md"), std::string::npos);
}

// `forkcheck help` and `forkcheck help COMMAND` print exactly what --help does, on stdout, exit 0.
TEST(Cli, HelpIsDashDashHelp) {
  const auto top = forkcheck({"--help"});
  const auto help = forkcheck({"help"});
  EXPECT_EQ(top.code, 0) << top.err;
  EXPECT_EQ(help.code, 0) << help.err;
  EXPECT_NE(help.out.find("Subcommands:"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("help "), std::string::npos) << "help is listed\n" << help.out;
  EXPECT_EQ(help.out, top.out);
  EXPECT_EQ(help.err, "");
  for (const std::string command :
       {"all", "run", "list", "exec", "watch", "bench", "env", "report", "diff"}) {
    SCOPED_TRACE(command);
    const auto flag = forkcheck({command, "--help"});
    const auto word = forkcheck({"help", command});
    EXPECT_EQ(word.code, 0) << word.err;
    EXPECT_NE(word.out.find("Usage:"), std::string::npos) << word.out;
    EXPECT_NE(word.out.find(" " + command + " "), std::string::npos) << word.out;
    EXPECT_EQ(word.out, flag.out);
  }
}

TEST(Cli, HelpOfNoSuchCommandIsAUsageError) {
  auto r = forkcheck({"help", "nosuch"});
  expect_usage_error(r, "help: unknown command nosuch");
  EXPECT_EQ(r.err.find("did you mean"), std::string::npos) << "nothing close: " << r.err;
  EXPECT_NE(r.err.find("the commands: all, run"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  r = forkcheck({"help", "wach"});
  expect_usage_error(r, "help: unknown command wach: did you mean watch?");
  EXPECT_EQ(r.out, "");
  expect_usage_error(forkcheck({"help", "exec", "watch"}), "one command at most");
}

// A misspelt command: one line naming it and the closest commands, exit 2, nothing written.
TEST(Cli, MisspeltCommandNamesTheClosest) {
  expect_usage_error(forkcheck({"exce"}), "unknown command exce: did you mean exec?");
  expect_usage_error(forkcheck({"al"}), "unknown command al: did you mean all?");
  expect_usage_error(forkcheck({"lsit", "--json"}), "unknown command lsit: did you mean list?");
  const auto far = forkcheck({"xyzzy"});
  expect_usage_error(far, "unknown command xyzzy");
  EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << far.err;
  // Before CLI11 would let --help win: a misspelt command is never silently ignored.
  expect_usage_error(forkcheck({"exce", "--help"}), "did you mean exec?");
}

// A misspelt option names the closest options of that command, before anything is written.
TEST(Cli, MisspeltOptionNamesTheClosestOfThatCommand) {
  const auto out = fresh_dir("misspelt");
  const std::string o = out.string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"exec", "--out", o, "--timout", "3", "--", "true"},
       "exec: unknown option --timout: did you mean --timeout?"},
      {{"exec", "--out", o, "--timout=3", "--", "true"},
       "exec: unknown option --timout: did you mean --timeout?"},
      {{"exec", "--out", o, "-timeout", "3", "--", "true"}, "did you mean --timeout?"},
      {{"watch", "--out", o, "--alow", "threads", "--", "true"}, "did you mean --allow?"},
      {{"list", "--jsn"}, "list: unknown option --jsn: did you mean --json?"},
      {{"run", "gomp-fork-hang", "--out", o, "--jbos", "2"}, "did you mean --jobs?"},
      {{"--verison"}, "unknown option --verison: did you mean --version?"},
      {{"--out", o, "all"}, "--out is an option of all, run"},
      // The program's own options go after --.
      {{"exec", "--out", o, "python3", "--version"}, "the command and its arguments go after --"},
  };
  for (const auto& [args, names] : bad) {
    std::string shown;
    for (const auto& a : args) shown += " " + a;
    SCOPED_TRACE(shown);
    const auto r = forkcheck(args);
    expect_usage_error(r, names);
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(fs::exists(out)) << "nothing written";
  }
  const auto far = forkcheck({"all", "--bogus"});
  expect_usage_error(far, "all: unknown option --bogus");
  EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << far.err;
}

TEST(Cli, DidYouMeanIsTheLeastEditDistance) {
  EXPECT_EQ(edit_distance("exce", "exec"), 1u) << "a swap is one edit";
  EXPECT_EQ(edit_distance("al", "all"), 1u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "env"), 3u);
  const std::vector<std::string> commands = {"all",    "run", "list",  "exec", "bench",
                                             "report", "env", "watch", "help"};
  EXPECT_EQ(closest_names("exce", commands), std::vector<std::string>{"exec"});
  EXPECT_EQ(closest_names("rn", commands), std::vector<std::string>{"run"});
  EXPECT_EQ(closest_names("ex", commands), std::vector<std::string>{"exec"}) << "a prefix";
  EXPECT_TRUE(closest_names("xyzzy", commands).empty());
  EXPECT_TRUE(closest_names("x", commands).empty()) << "one letter is near everything";
  EXPECT_EQ(closest_names("timout", {"out", "timeout", "quiet"}),
            std::vector<std::string>{"timeout"});
  EXPECT_EQ(closest_names("on", {"out", "only"}), std::vector<std::string>{"only"}) << "a prefix";
  EXPECT_EQ(closest_names("cat", {"bat", "cart", "dog", "hat"}),
            (std::vector<std::string>{"bat", "cart", "hat"}))
      << "every one at the least distance";
  EXPECT_EQ(did_you_mean({"out", "only"}), "did you mean out or only?");
  EXPECT_EQ(did_you_mean({"a", "b", "c"}), "did you mean a, b or c?");
  EXPECT_EQ(did_you_mean({}), "");
}

// The exit statuses: one table, in forkcheck --help; every command's help points at it.
TEST(Cli, HelpShowsTheExitStatusTableOnce) {
  const auto r = forkcheck({"--help"});
  ASSERT_EQ(r.code, 0) << r.err;
  const size_t at = r.out.find("Exit status (every command):");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Exit status", at + 1), std::string::npos) << "once\n" << r.out;
  const std::string table = r.out.substr(at);
  for (const char* row : {"\n  0      ok", "\n  1      a finding", "\n  2      usage error",
                          "\n  128+N  forkcheck was interrupted by signal N"})
    EXPECT_NE(table.find(row), std::string::npos) << row << " in\n" << table;
  for (const std::string command :
       {"all", "run", "list", "exec", "watch", "bench", "env", "report", "diff"}) {
    const auto sub = forkcheck({command, "--help"});
    EXPECT_EQ(sub.out.find("Exit status (every command)"), std::string::npos) << sub.out;
    EXPECT_NE(sub.out.find("forkcheck --help"), std::string::npos) << command << "\n" << sub.out;
  }
}

// forkcheck with its stdout on a pseudo-terminal (stdin and stderr on /dev/null), TERM=xterm and
// NO_COLOR as `no_color` says (nullptr: unset): what it printed there.
std::string forkcheck_on_terminal(const std::vector<std::string>& args, const char* no_color) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) {
    ADD_FAILURE() << "no pseudo-terminal: " << std::strerror(errno);
    return "";
  }
  const std::string terminal = ::ptsname(master);
  // Everything the child needs, made before fork().
  std::vector<std::string> argv_text = {FC_FORKCHECK}, env_text;
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    if (kv.rfind("TERM=", 0) != 0 && kv.rfind("NO_COLOR=", 0) != 0) env_text.push_back(kv);
  }
  env_text.push_back("TERM=xterm");
  if (no_color != nullptr) env_text.push_back(std::string("NO_COLOR=") + no_color);
  std::vector<char*> argv_c, env_c;
  for (auto& a : argv_text) argv_c.push_back(a.data());
  for (auto& e : env_text) env_c.push_back(e.data());
  argv_c.push_back(nullptr);
  env_c.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();
    const int tty = ::open(terminal.c_str(), O_RDWR);
    const int null = ::open("/dev/null", O_RDWR);
    if (tty < 0 || null < 0) ::_exit(126);
    ::dup2(null, 0);
    ::dup2(tty, 1);
    ::dup2(null, 2);
    ::execve(argv_c[0], argv_c.data(), env_c.data());
    ::_exit(127);
  }
  std::string out;
  int status = 0;
  bool ended = false, closed = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!closed && !ended && std::chrono::steady_clock::now() < deadline) {
    pollfd p = {master, POLLIN, 0};
    if (::poll(&p, 1, 200) > 0) {
      char buf[4096];
      const ssize_t n = ::read(master, buf, sizeof buf);
      if (n > 0)
        out.append(buf, static_cast<size_t>(n));
      else if (!(n < 0 && errno == EINTR))
        closed = true;  // EIO: every end of the terminal is closed, forkcheck's too
    } else {
      ended = ::waitpid(pid, &status, WNOHANG) == pid;
    }
  }
  if (ended) {  // what it wrote last, if the terminal still holds any
    pollfd p = {master, POLLIN, 0};
    char buf[4096];
    ssize_t n = 0;
    while (::poll(&p, 1, 0) > 0 && (n = ::read(master, buf, sizeof buf)) > 0)
      out.append(buf, static_cast<size_t>(n));
  } else if (closed) {
    ended = ::waitpid(pid, &status, 0) == pid;
  } else {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    ADD_FAILURE() << "forkcheck did not end";
  }
  ::close(master);
  EXPECT_TRUE(WIFEXITED(status)) << status;
  return out;
}

std::string files_text(const fs::path& dir) {
  std::string all;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) {
      std::ifstream in(e.path(), std::ios::binary);
      all += std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    }
  return all;
}

// exec and matrix speak of the user's program as it ends: none of the catalog's words (cases,
// variants, what was expected, harness failures) on the terminal, for a program that works or one
// that fails.
TEST(Cli, ExecAndMatrixSpeakOfTheProgramNotOfACatalog) {
  const auto out = fresh_dir("subject-words");
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"exec", "--out", out.string(), "--", "/bin/true"},
        std::vector<std::string>{"exec", "--out", out.string(), "--", "/bin/false"},
        std::vector<std::string>{"matrix", "--out", out.string(), "--", "/usr/bin/python3", "-c",
                                 "raise SystemExit(3)"}}) {
    if (!fs::exists(command[4])) continue;  // matrix needs a Python interpreter
    const auto r = forkcheck(command);
    for (const char* word : {"expected", "variants", " cases", "harness failures", "[ 1/1]"})
      EXPECT_EQ(r.out.find(word), std::string::npos) << word << " in\n" << r.out;
    EXPECT_NE(r.out.find(command[0] == "matrix"      ? "[3/3] under forkserver: error after"
                         : command[4] == "/bin/true" ? "the program ended in"
                                                     : "the program: error after"),
              std::string::npos)
        << r.code << "\n"
        << r.out << "\n"
        << r.err;
  }
  // Under each method the program exits 0 while both its workers raise: never said to be ok.
  if (!fs::exists("/usr/bin/python3")) return;
  const fs::path script = out / "workers_fail.py";
  std::ofstream(script) << "import multiprocessing as mp\n"
                           "def work(x):\n"
                           "    raise ValueError(x)\n"
                           "if __name__ == '__main__':\n"
                           "    ps = [mp.Process(target=work, args=(i,)) for i in range(2)]\n"
                           "    for p in ps: p.start()\n"
                           "    for p in ps: p.join()\n";
  const auto r =
      forkcheck({"matrix", "--out", out.string(), "--", "/usr/bin/python3", script.string()});
  std::size_t failed = 0;
  for (const char* method : {"fork", "spawn", "forkserver"})
    if (r.out.find(std::string("under ") + method + ": ended in ") != std::string::npos) ++failed;
  EXPECT_EQ(failed, 3u) << r.out;
  EXPECT_EQ(test_text::occurrences(r.out, ", but 2 processes of it failed  FAILED"), 3u) << r.out;
  // Nor stored as ok: each method's run is an error, its exit status 0 kept as the fact it is.
  const auto report = nlohmann::json::parse(test_text::slurp(out / "report.json"), nullptr, false);
  ASSERT_TRUE(report.is_object()) << r.err;
  for (const auto& v : report["cases"][0]["variants"]) {
    EXPECT_EQ(v["outcome"], "error") << v["name"];
    EXPECT_EQ(v["exit"]["code"], 0) << v["name"];
    EXPECT_EQ(v["message"].get<std::string>().rfind("exited 0, but 2 processes of it failed: ", 0),
              0u)
        << v["message"];
  }
  EXPECT_EQ(report["summary"]["by_outcome"].value("ok", 0), 0) << report["summary"];
  // report.html and issue.md are shaped for one program: no catalog's words.
  const std::string html = test_text::slurp(out / "report.html");
  for (const char* word :
       {"<h3>Variants", " \u00b7 subject", "what the case measured", "<span class=\"id\">matrix"})
    EXPECT_EQ(html.find(word), std::string::npos) << word;
  EXPECT_NE(html.find("<h3>Under each start method</h3>"), std::string::npos);
  const std::string issue = test_text::slurp(out / "issue.md");
  EXPECT_EQ(issue.find("(expected)"), std::string::npos) << issue;
  EXPECT_NE(issue.find("fork: exited 0, but 2 processes of it failed; spawn: "), std::string::npos)
      << issue;
  EXPECT_NE(r.out.find("FINDING: matrix: fails under fork, spawn, forkserver"), std::string::npos)
      << r.out;
  // Under exec: the finding says so, and no worker's traceback passes for the program's own.
  const auto e =
      forkcheck({"exec", "--out", out.string(), "--", "/usr/bin/python3", script.string()});
  EXPECT_EQ(e.code, 1) << e.err;
  EXPECT_NE(e.out.find("FINDING: exec: the program exited 0, but 2 processes of it failed: "),
            std::string::npos)
      << e.out;
  for (const char* word : {"expected", "variants", " cases", "harness failures", "[ 1/1]"})
    EXPECT_EQ(e.out.find(word), std::string::npos) << word << " in\n" << e.out;
  const std::string exec_issue = test_text::slurp(out / "issue.md");
  EXPECT_EQ(exec_issue.find("### The exception"), std::string::npos) << exec_issue;
  EXPECT_NE(exec_issue.find("### Processes of it that failed"), std::string::npos) << exec_issue;
  const std::string exec_md = test_text::slurp(out / "summary.md");
  for (const char* word : {"## Cases", ", subject)", "Source: "})
    EXPECT_EQ(exec_md.find(word), std::string::npos) << word << "\n" << exec_md;
}

// forkcheck's own verdict words are coloured on a terminal unless NO_COLOR is set (and not
// empty); never when stdout is a pipe, never in the files.
TEST(Cli, ColourOnATerminalOnlyAndNeverInFiles) {
  const std::string green = "\033[32m", red = "\033[1;31m", reset = "\033[0m";
  const auto out = fresh_dir("colour");
  const std::string o = out.string();

  std::string t = forkcheck_on_terminal({"exec", "--out", o, "--", "/bin/true"}, nullptr);
  EXPECT_NE(t.find("ended in"), std::string::npos) << t;
  EXPECT_NE(t.find(green + "ok" + reset), std::string::npos) << "the program's verdict\n" << t;
  EXPECT_EQ(files_text(out).find('\033'), std::string::npos) << "no colour in the files";

  t = forkcheck_on_terminal({"exec", "--out", o, "--", "/bin/false"}, "");
  EXPECT_NE(t.find(red + "FAILED" + reset), std::string::npos) << "NO_COLOR empty\n" << t;
  EXPECT_EQ(files_text(out).find('\033'), std::string::npos) << "no colour in the files";

  for (const char* command : {"/bin/true", "/bin/false"}) {
    t = forkcheck_on_terminal({"exec", "--out", o, "--", command}, "1");
    EXPECT_NE(t.find(std::string(command) == "/bin/true" ? "ended in" : "FAILED"),
              std::string::npos)
        << t;
    EXPECT_EQ(t.find('\033'), std::string::npos) << "NO_COLOR=1\n" << t;

    const auto piped = forkcheck({"exec", "--out", o, "--", command});
    EXPECT_FALSE(piped.out.empty());
    EXPECT_EQ(piped.out.find('\033'), std::string::npos) << "a pipe\n" << piped.out;
  }
#ifdef __linux__
  // watch's last line, too (the preloaded shim is Linux's).
  t = forkcheck_on_terminal({"watch", "--out", o, "--", "/bin/true"}, nullptr);
  EXPECT_NE(t.find("forkcheck watch: " + green + "ok" + reset + ": no hazardous fork"),
            std::string::npos)
      << t;
#endif
  fs::remove_all(out);
}

}  // namespace
}  // namespace fc::harness
