// Where a worker was started, guarded or not (main_guard.h), read from scripts written here, and
// the advice that follows from it (fork_hazards.h).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/watch/fork_hazards.h"
#include "harness/watch/main_guard.h"

namespace fc::harness {
namespace {

using json = nlohmann::json;
using Guard = StartSite::Guard;

// A script with `text`, and the stack of a fork made at its `line`, in <module>.
struct Script {
  std::string path;
  explicit Script(const std::string& text) {
    static int n = 0;
    path = testing::TempDir() + "/main-guard-" + std::to_string(::getpid()) + "-" +
           std::to_string(++n) + ".py";
    std::ofstream(path) << text;
  }
  ~Script() { std::filesystem::remove(path); }
  json stack(int line, const char* function = "<module>") const {
    return json::array({{{"file", path}, {"line", line}, {"function", function}},
                        {{"file", "/usr/lib/python3.11/multiprocessing/process.py"},
                         {"line", 121},
                         {"function", "start"}}});
  }
};

TEST(MainGuard, AStartAtTheTopLevelIsUnguarded) {
  Script s(
      "import multiprocessing as mp\n"
      "p = mp.Process(target=print)\n"
      "p.start()\n");
  const auto site = start_site(s.stack(3));
  EXPECT_EQ(site.guard, Guard::kUnguarded);
  EXPECT_EQ(site.line, 3);
}

TEST(MainGuard, AStartUnderTheGuardIsGuardedWhateverItsQuotesAndNesting) {
  Script s(
      "import multiprocessing as mp\n"
      "\n"
      "if __name__ == '__main__':\n"
      "    # a comment at column 4\n"
      "\n"
      "    with mp.Pool(2) as pool:\n"
      "        pool.map(print, [1])\n"
      "if \"__main__\" == __name__: mp.Process(target=print).start()\n");
  EXPECT_EQ(start_site(s.stack(7)).guard, Guard::kGuarded);
  EXPECT_EQ(start_site(s.stack(8)).guard, Guard::kGuarded) << "the guard's own line";
}

TEST(MainGuard, AStartInsideAnotherTopLevelBlockIsUnguarded) {
  Script s(
      "import multiprocessing as mp\n"
      "for i in range(2):\n"
      "    mp.Process(target=print).start()\n");
  EXPECT_EQ(start_site(s.stack(3)).guard, Guard::kUnguarded);
}

TEST(MainGuard, WhatThisReadingIsNotSureOfIsUnknown) {
  Script s(
      "import multiprocessing as mp\n"
      "if __name__ != '__main__':\n"
      "    pass\n"
      "else:\n"
      "    mp.Process(target=print).start()\n");
  EXPECT_EQ(start_site(s.stack(5)).guard, Guard::kUnknown) << "an else: of another test";
  EXPECT_EQ(start_site(s.stack(3, "main")).guard, Guard::kUnknown) << "not the top level";
  EXPECT_EQ(start_site(s.stack(99)).guard, Guard::kUnknown) << "past the end: not this source";
  EXPECT_EQ(start_site(json()).guard, Guard::kUnknown) << "no Python stack";
  Script gone("");
  const json stack = gone.stack(1);
  std::filesystem::remove(gone.path);
  EXPECT_EQ(start_site(stack).guard, Guard::kUnknown) << "unreadable";
}

TEST(MainGuard, TheAdviceAddsTheGuardFirstOnlyWhereItIsMissing) {
  const json hazards = json::array({{{"kind", "threads"}, {"instead", ""}}});
  Script bare(
      "import multiprocessing as mp\n"
      "mp.Process(target=print).start()\n");
  const auto advice = fork_advice(hazards, bare.stack(2));
  ASSERT_FALSE(advice.empty());
  const std::string name = std::filesystem::path(bare.path).filename().string();
  EXPECT_EQ(advice[0].rfind("put the code that starts workers under `if __name__ == "
                            "\"__main__\":` (" +
                                name + ":2 runs at the main script's top level",
                            0),
            0u)
      << advice[0];
  Script guarded(
      "import multiprocessing as mp\n"
      "if __name__ == '__main__':\n"
      "    mp.Process(target=print).start()\n");
  EXPECT_EQ(fork_advice(hazards, guarded.stack(3))[0].rfind("start the worker with spawn", 0), 0u);
  EXPECT_EQ(fork_advice(hazards)[0].rfind("start the worker with spawn", 0), 0u);
}

}  // namespace
}  // namespace fc::harness
