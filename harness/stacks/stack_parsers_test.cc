// The stack parsers (harness/stacks/stacks.h) on captured debugger output: eu-stack's and gdb's
// native frames, CPython's gdb extension (py-bt), and the function names they are shown by.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/stacks/stacks.h"

namespace fc::harness {
namespace {

TEST(StackNames, ParametersAndArgumentsAreDropped) {
  EXPECT_EQ(function_name_only("lock_a_then_b ()"), "lock_a_then_b");
  EXPECT_EQ(function_name_only("f (x=1, y=...)"), "f");
  EXPECT_EQ(function_name_only("fc::join_pool(std::vector<fc::launch::Worker, "
                               "std::allocator<fc::launch::Worker> >&)"),
            "fc::join_pool");
  EXPECT_EQ(function_name_only("(anonymous namespace)::run(fc::VariantSpec const&)"),
            "(anonymous namespace)::run");
  EXPECT_EQ(function_name_only("std::function<void (int)>::operator()(int) const"),
            "std::function<void (int)>::operator()");
  EXPECT_EQ(function_name_only("__cxa_guard_acquire"), "__cxa_guard_acquire");
}

TEST(StackParsers, EuStackFramesModulesAndSources) {
  const std::string text =
      "PID 4625 - process\n"
      "TID 4627:\n"
      "#0  0x00007f07624f7823 - /usr/lib/x86_64-linux-gnu/libgomp.so.1.0.0\n"
      "#1  0x00007f0763894e67 at::native::structured_sum_out::impl(at::Tensor "
      "const&) - "
      "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13.0\n"
      "TID 4625:\n"
      "#0  0x00007f2fef31f829 syscall - /usr/lib/x86_64-linux-gnu/libc.so.6\n"
      "    ../sysdeps/unix/sysv/linux/x86_64/syscall.S:38\n"
      "#1  0x00007f2fef4a92e0 __cxa_guard_acquire - "
      "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30\n"
      "#2  0x000055bbfcb5aeff (anonymous namespace)::registry() - "
      "/bin/forkcheck-repro\n"
      "    /src/repros/cases/static_init_fork.cc:45:19\n";
  auto threads = parse_eu_stack(text, 4625);
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads[0].tid, 4625);  // the main thread first
  EXPECT_EQ(threads[0].pid, 4625);
  ASSERT_EQ(threads[0].frames.size(), 3u);
  EXPECT_EQ(threads[0].frames[0].function, "syscall");
  EXPECT_EQ(threads[0].frames[0].where, "at ../sysdeps/unix/sysv/linux/x86_64/syscall.S:38");
  EXPECT_EQ(threads[0].frames[1].function, "__cxa_guard_acquire");
  EXPECT_EQ(threads[0].frames[1].where, "from /usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30");
  EXPECT_EQ(threads[0].frames[2].function, "(anonymous namespace)::registry");
  EXPECT_EQ(threads[0].frames[2].where, "at /src/repros/cases/static_init_fork.cc:45");
  ASSERT_EQ(threads[1].frames.size(), 2u);
  EXPECT_EQ(threads[1].frames[0].function,
            "??");  // no symbol: the module still says where
  EXPECT_EQ(threads[1].frames[0].where, "from /usr/lib/x86_64-linux-gnu/libgomp.so.1.0.0");
  EXPECT_EQ(threads[1].frames[1].function, "at::native::structured_sum_out::impl");
}

TEST(StackParsers, GdbThreadsNamesAndFrames) {
  const std::string text =
      "[New LWP 12]\n"
      "Thread 2 (Thread 0x7f00 (LWP 12) \"locker_ab\"):\n"
      "#0  futex_wait (private=0, expected=2) at "
      "../sysdeps/nptl/futex-internal.h:146\n"
      "#1  0x000055 in lock_a_then_b () at /tmp/dl.cc:6\n"
      "Thread 1 (Thread 0x7f01 (LWP 11) \"fault_child\"):\n"
      "#0  0x00007f in ?? () from /lib/x86_64-linux-gnu/libgomp.so.1\n"
      "#1  0x00007f in GOMP_parallel () from "
      "/lib/x86_64-linux-gnu/libgomp.so.1\n";
  auto threads = parse_gdb_backtraces(text, 11);
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads[0].tid, 11);
  EXPECT_EQ(threads[0].name, "fault_child");
  EXPECT_EQ(threads[0].frames[0].function, "??");
  EXPECT_EQ(threads[0].frames[1].function, "GOMP_parallel");
  EXPECT_EQ(threads[0].frames[1].where, "from /lib/x86_64-linux-gnu/libgomp.so.1");
  EXPECT_EQ(threads[1].name, "locker_ab");
  EXPECT_EQ(threads[1].frames[0].function, "futex_wait");
  EXPECT_EQ(threads[1].frames[1].function, "lock_a_then_b");
  EXPECT_EQ(threads[1].frames[1].where, "at /tmp/dl.cc:6");
}

// CPython's gdb extension: each thread's Python frames by LWP, source lines kept, built-ins
// named without their addresses, threads that run no Python left without frames.
TEST(StackParsers, GdbPyBtFramesGoToTheirThreads) {
  std::vector<ThreadStack> threads(3);
  threads[0].tid = 100;
  threads[1].tid = 101;
  threads[2].tid = 102;
  const std::string text =
      "==forkcheck: py-bt==\n"
      "\n"
      "Thread 3 (Thread 0x7f0 (LWP 102) \"python3\"):\n"
      "Unable to locate python frame\n"
      "\n"
      "Thread 2 (Thread 0x7f1 (LWP 101) \"python3\"):\n"
      "Traceback (most recent call first):\n"
      "  <built-in method acquire of _thread.lock object at remote 0x7f61dc12d1e0>\n"
      "  File \"/usr/lib/python3.11/threading.py\", line 320, in wait\n"
      "    waiter.acquire()\n"
      "  File \"/home/u/train.py\", line 13, in main\n"
      "    pool.map(work, range(4))\n"
      "\n"
      "Thread 1 (Thread 0x7f2 (LWP 100) \"python3\"):\n"
      "Traceback (most recent call first):\n"
      "  File \"/home/u/train.py\", line 5, in work\n";
  std::string missing;
  EXPECT_EQ(parse_gdb_py_backtraces(text, threads, missing), 2u);
  EXPECT_EQ(missing, "");
  ASSERT_EQ(threads[1].python.size(), 3u);
  EXPECT_EQ(threads[1].python[0].file, "");
  EXPECT_EQ(threads[1].python[0].function, "built-in method acquire of _thread.lock object");
  EXPECT_EQ(threads[1].python[1].file, "/usr/lib/python3.11/threading.py");
  EXPECT_EQ(threads[1].python[1].line, 320);
  EXPECT_EQ(threads[1].python[1].code, "waiter.acquire()");
  EXPECT_EQ(threads[1].python[2].function, "main");
  ASSERT_EQ(threads[0].python.size(), 1u);
  EXPECT_EQ(threads[0].python[0].line, 5);
  EXPECT_TRUE(threads[2].python.empty());
}

TEST(StackParsers, GdbPyBtSaysWhyThereAreNoPythonFrames) {
  std::vector<ThreadStack> threads(1);
  threads[0].tid = 7;
  std::string missing;
  EXPECT_EQ(parse_gdb_py_backtraces(
                "Thread 1 (Thread 0x1 (LWP 7)):\nUndefined command: \"py-bt\".  Try \"help\".\n",
                threads, missing),
            0u);
  EXPECT_NE(missing.find("gdb extension is not installed"), std::string::npos) << missing;
  EXPECT_EQ(
      parse_gdb_py_backtraces("Thread 1 (Thread 0x1 (LWP 7)):\nUnable to locate python frame\n",
                              threads, missing),
      0u);
  EXPECT_NE(missing.find("no Python frame"), std::string::npos) << missing;
}

// A faulthandler dump of a process inside a call the bootstrap wraps (Popen.wait, told to
// forkcheck when it learns a child's end): the wrapper's frame is ours, not the program's, and is
// left out; every other frame stays, in order.
TEST(StackParsers, FaulthandlerDumpLeavesOutTheBootstrapsOwnFrames) {
  const std::string text =
      "Fatal Python error: Segmentation fault\n"
      "\n"
      "Current thread 0x00007f2e91a6b740 (most recent call first):\n"
      "  File \"/usr/lib/python3.11/multiprocessing/popen_fork.py\", line 27 in poll\n"
      "  File \"/usr/share/forkcheck/python/forkcheck_boot.py\", line 1419 in wrapper\n"
      "  File \"/usr/lib/python3.11/multiprocessing/popen_fork.py\", line 43 in wait\n"
      "  File \"/home/u/forkcheck_boot.py.txt\", line 1 in kept\n"
      "  File \"train.py\", line 9 in <module>\n";
  const PyDump dump = parse_faulthandler_dump(text);
  EXPECT_EQ(dump.fatal, "Segmentation fault");
  ASSERT_EQ(dump.threads.size(), 1u);
  std::vector<std::string> functions;
  for (const auto& f : dump.threads[0].frames) functions.push_back(f.function);
  EXPECT_EQ(functions, (std::vector<std::string>{"poll", "wait", "kept", "<module>"}));
}

}  // namespace
}  // namespace fc::harness
