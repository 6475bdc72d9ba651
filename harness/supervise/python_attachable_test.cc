// The threads file of the attachable bootstrap (harness/supervise/python_attachable.h), read as
// forkcheck attach reads it: whose it is, which signal, which threads. No process.
#include <string>

#include <gtest/gtest.h>

#include "harness/supervise/python_attachable.h"

namespace fc::harness {
namespace {

TEST(AttachableThreads, ListsEachThreadOnceTheLastLineWinningAndSkipsAPartLine) {
  std::string why;
  const auto threads = parse_attachable_threads(
      "forkcheck-py-threads pid=40 signal=41\n+42 900 loader\n+43 901 Thread-2 (feed)\n"
      "+42 950 reused\n+44 nostart\n+4",
      40, 41, why);
  ASSERT_TRUE(threads.has_value()) << why;
  // "+4" is a line being written, perhaps of "+4711 ..."; "+44 nostart" has no start time.
  ASSERT_EQ(threads->size(), 2u);
  EXPECT_EQ((*threads)[0].tid, 42);
  EXPECT_EQ((*threads)[0].start, 950u);
  EXPECT_EQ((*threads)[0].name, "reused");
  EXPECT_EQ((*threads)[1].name, "Thread-2 (feed)");
}

TEST(AttachableThreads, AParentsFileInheritedAtForkIsNotTheChilds) {
  std::string why;
  EXPECT_FALSE(parse_attachable_threads("forkcheck-py-threads pid=40 signal=41\n+40 7 MainThread\n",
                                        77, 41, why));
  EXPECT_NE(why.find("pid 40's, inherited at fork"), std::string::npos) << why;
}

TEST(AttachableThreads, AnotherSignalThanThisForkchecksIsNeverSent) {
  std::string why;
  EXPECT_FALSE(parse_attachable_threads("forkcheck-py-threads pid=40 signal=12\n", 40, 41, why));
  EXPECT_NE(why.find("another signal"), std::string::npos) << why;
  EXPECT_FALSE(parse_attachable_threads("something else\n", 40, 41, why));
}

}  // namespace
}  // namespace fc::harness
