// The threads file of the attachable bootstrap (harness/supervise/python_attachable.h), read as
// forkcheck attach reads it: whose it is, which signal, which threads. On Linux, also the files
// found in a live process (this test's own, made here as the bootstrap makes them): a listed
// thread whose start time is not its id's thread's is never offered; and the channel lets go of
// what an earlier look adopted.
#include <string>

#include <gtest/gtest.h>

#include "harness/supervise/python_attachable.h"

#ifdef __linux__
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "harness/supervise/python_channel.h"
#endif

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

#ifdef __linux__
// The kernel's start time of one of this process's threads (field 22 of its stat line).
unsigned long long start_of(int tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 1));
  std::string field;
  for (int i = 0; i < 20 && fields >> field; ++i) {
  }
  return std::stoull(field);
}

TEST(AttachableFiles, AListedIdWhoseThreadStartedAtAnotherTimeIsNeverOffered) {
  std::atomic<int> tid_a{0}, tid_b{0};
  std::atomic<bool> done{false};
  auto body = [&done](std::atomic<int>& tid) {
    tid = static_cast<int>(::syscall(SYS_gettid));
    while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  };
  std::thread a(body, std::ref(tid_a)), b(body, std::ref(tid_b));
  while (tid_a == 0 || tid_b == 0) std::this_thread::yield();
  const int dumps = ::memfd_create("forkcheck-py-dumps", MFD_CLOEXEC);
  const int threads = ::memfd_create("forkcheck-py-threads", MFD_CLOEXEC);
  ASSERT_GE(dumps, 0);
  ASSERT_GE(threads, 0);
  // a as the bootstrap lists it; b with another start time (an earlier thread that had its id);
  // a thread long gone.
  const std::string text = "forkcheck-py-threads pid=" + std::to_string(::getpid()) +
                           " signal=41\n+" + std::to_string(tid_a) + " " +
                           std::to_string(start_of(tid_a)) + " a\n+" + std::to_string(tid_b) + " " +
                           std::to_string(start_of(tid_b) + 1) + " b\n+999999999 5 gone\n";
  ASSERT_EQ(::write(threads, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  std::string why;
  auto files = attachable_files(::getpid(), 41, why);
  done = true;
  a.join();
  b.join();
  ::close(dumps);
  ::close(threads);
  ASSERT_TRUE(files.has_value()) << why;
  ::close(files->dump_fd);
  ASSERT_EQ(files->threads.size(), 1u);
  EXPECT_EQ(files->threads[0].tid, tid_a.load());
  EXPECT_EQ(files->threads[0].name, "a");
}

TEST(AttachableFiles, EachLookAdoptsAfreshWhatAnEarlierOneFound) {
  auto channel = PythonChannel::for_attach();
  const int file = ::memfd_create("dumps", MFD_CLOEXEC);
  ASSERT_GE(file, 0);
  channel->adopt(4242, file, {{4243, "loader"}}, PythonChannel::Clock::now());
  const auto offer = channel->offer(4242);
  ASSERT_TRUE(offer.has_value());
  EXPECT_TRUE(offer->thread_signal);
  EXPECT_FALSE(offer->stacks_signal);  // nothing to answer for every thread: asked one by one
  EXPECT_EQ(offer->main_tid, 4242);
  EXPECT_TRUE(channel->facts().is_null()) << "an adopted process said nothing";
  channel->forget_adopted();
  EXPECT_FALSE(channel->offer(4242).has_value()) << "not asked on an earlier look's word";
}
#endif

}  // namespace
}  // namespace fc::harness
