// The environment a tree's child starts with (child_environment.h).
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/supervise/child_environment.h"

namespace fc::harness {
namespace {

using Entries = std::vector<std::string>;

TEST(ChildEnvironment, TheJobsVariablesReplaceInheritedOnesOfTheSameNameEachNameOnce) {
  const Entries inherited = {"HOME=/root", "FORKCHECK_RUN=old", "PATH=/bin",
                             "FORKCHECK_CHANNEL_FD=9"};
  const Entries env =
      child_environment(inherited, {{"FORKCHECK_RUN", "r1-1"}, {"A", "1"}, {"A", "2"}});
  EXPECT_EQ(env, (Entries{"HOME=/root", "PATH=/bin", "FORKCHECK_RUN=r1-1", "A=2"}))
      << "the last value given wins (getenv and CPython's os.environ take the first)";
}

TEST(ChildEnvironment, ForkchecksOwnChannelDescriptorIsNeverInherited) {
  EXPECT_EQ(child_environment({"FORKCHECK_CHANNEL_FD=9", "X=1"}, {}), (Entries{"X=1"}));
  EXPECT_EQ(child_environment({"FORKCHECK_CHANNEL_FD=9"}, {{"FORKCHECK_CHANNEL_FD", "5"}}),
            (Entries{"FORKCHECK_CHANNEL_FD=5"}))
      << "the job's own channel";
}

TEST(ChildEnvironment, TheBootstrapGoesFirstOnThePythonPathTheChildWouldHaveHad) {
  LaunchSpec spec;
  spec.python_bootstrap = "/opt/forkcheck/python";
  auto vars = python_bootstrap_env(spec, "@fc-1", 38, 39, nullptr);
  ASSERT_FALSE(vars.empty());
  EXPECT_EQ(vars[0], (std::pair<std::string, std::string>{"PYTHONPATH", "/opt/forkcheck/python"}));
  vars = python_bootstrap_env(spec, "@fc-1", 38, 39, "/home/me/lib");
  EXPECT_EQ(vars[0].second, "/opt/forkcheck/python:/home/me/lib");
  spec.env = {{"PYTHONPATH", "/spec/lib"}};
  vars = python_bootstrap_env(spec, "@fc-1", 38, 39, "/home/me/lib");
  EXPECT_EQ(vars[0].second, "/opt/forkcheck/python:/spec/lib") << "the spec's, not forkcheck's";
  // With the spec's own PYTHONPATH among the job's variables, the child gets the bootstrap's.
  EnvVars all = spec.env;
  all.insert(all.end(), vars.begin(), vars.end());
  const Entries env = child_environment({"PYTHONPATH=/home/me/lib"}, all);
  EXPECT_EQ(std::count(env.begin(), env.end(), "PYTHONPATH=/opt/forkcheck/python:/spec/lib"), 1);
  EXPECT_EQ(std::count_if(env.begin(), env.end(),
                          [](const std::string& e) { return e.rfind("PYTHONPATH=", 0) == 0; }),
            1);
}

TEST(ChildEnvironment, TheBootstrapIsToldItsChannelSignalsAndBytecodeFolder) {
  LaunchSpec spec;
  spec.python_bootstrap = "/b";
  auto vars = python_bootstrap_env(spec, "@fc-1", 38, 39, nullptr);
  const auto value = [&](const std::string& k) {
    for (const auto& [n, v] : vars)
      if (n == k) return v;
    return std::string("(absent)");
  };
  EXPECT_EQ(value("FORKCHECK_PY_CHANNEL"), "@fc-1");
  EXPECT_EQ(value("FORKCHECK_PY_SIGNAL"), "38");
  EXPECT_EQ(value("FORKCHECK_PY_STACKS_SIGNAL"), "39");
  EXPECT_EQ(value("FORKCHECK_PY_BYTECODE"), "(absent)");
  spec.python_bytecode = "/cache";
  vars = python_bootstrap_env(spec, "@fc-1", 38, 39, nullptr);
  EXPECT_EQ(value("FORKCHECK_PY_BYTECODE"), "/cache");
}

}  // namespace
}  // namespace fc::harness
