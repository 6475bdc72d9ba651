// A crash dump in the program's stderr adopted by the one process that could have written it
// (stderr_crash_dumps.h), on hand-built facts: a fork child shares its parent's thread ident.
#include <csignal>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/supervise/stderr_crash_dumps.h"

namespace fc::harness {
namespace {

using json = nlohmann::json;

constexpr std::uint64_t kIdent = 0x7fa894e102c0;

const std::string kDump =
    "collected 1 item\n"
    "Fatal Python error: Segmentation fault\n\n"
    "Current thread 0x00007fa894e102c0 (most recent call first):\n"
    "  File \"/usr/lib/python3.11/ctypes/__init__.py\", line 519 in string_at\n"
    "  File \"/src/test_worker_crash.py\", line 9 in crash\n"
    "  File \"/usr/lib/python3.11/multiprocessing/process.py\", line 108 in run\n\n"
    "1 passed in 0.05s\n";

// pytest (pid 10, exited) and the worker it forked (pid 11, no exit: killed by `code`).
json facts(int code) {
  json parent = {{"pid", 10},
                 {"main_thread", {{"ident", kIdent}}},
                 {"threads", json::array()},
                 {"exit", {{"code", 0}}},
                 {"child_exits", json::array({{{"pid", 11}, {"returncode", code}}})}};
  json child = {{"pid", 11},
                {"main_thread", {{"ident", kIdent}}},
                {"threads", json::array()},
                {"exit", nullptr},
                {"child_exits", json::array()}};
  return {{"processes", json::array({parent, child})}};
}

TEST(StderrCrashDumps, TheWorkerThatDiedOfTheDumpsSignalAdoptsIt) {
  json python = facts(-SIGSEGV);
  adopt_crash_dumps_from_stderr(python, kDump);
  EXPECT_FALSE(python["processes"][0].contains("crash")) << "the parent exited by itself";
  const json& crash = python["processes"][1]["crash"];
  ASSERT_TRUE(crash.is_object()) << python.dump(1);
  EXPECT_EQ(crash["fatal"], "Segmentation fault");
  EXPECT_EQ(crash["written_to"], "stderr");
  EXPECT_EQ(crash["threads"][0]["frames"][1]["line"], 9);
}

TEST(StderrCrashDumps, AWorkerKilledByAnotherSignalDoesNot) {
  json python = facts(-SIGTERM);
  adopt_crash_dumps_from_stderr(python, kDump);
  EXPECT_FALSE(python["processes"][1].contains("crash")) << python.dump(1);
}

TEST(StderrCrashDumps, TwoProcessesThatCouldHaveWrittenItLeaveItUnadopted) {
  json python = facts(-SIGSEGV);
  json twin = python["processes"][1];
  twin["pid"] = 12;
  python["processes"].push_back(twin);
  adopt_crash_dumps_from_stderr(python, kDump);
  EXPECT_FALSE(python["processes"][1].contains("crash")) << python.dump(1);
  EXPECT_FALSE(python["processes"][2].contains("crash")) << python.dump(1);
}

TEST(StderrCrashDumps, AProcessWithItsOwnCrashRecordKeepsIt) {
  json python = facts(-SIGSEGV);
  python["processes"][1]["crash"] = {{"fatal", "Aborted"}};
  adopt_crash_dumps_from_stderr(python, kDump);
  EXPECT_EQ(python["processes"][1]["crash"]["fatal"], "Aborted");
}

}  // namespace
}  // namespace fc::harness
