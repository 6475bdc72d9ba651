// Where a worker's function is defined (worker_home.h), read from scripts written here, with the
// stacks a hung worker shows (innermost first).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/watch/worker_home.h"

namespace fc::harness {
namespace {

using Where = WorkerHome::Where;

struct WorkerScript {
  std::string path;
  explicit WorkerScript(const std::string& text) {
    static int n = 0;
    path = testing::TempDir() + "/worker-home-" + std::to_string(::getpid()) + "-" +
           std::to_string(++n) + ".py";
    std::ofstream(path) << text;
  }
  ~WorkerScript() { std::filesystem::remove(path); }
  // A worker's stack whose target runs `function` at `line`, `inner` frames deeper.
  std::vector<PyFrame> stack(const char* function, int line,
                             std::vector<PyFrame> inner = {}) const {
    std::vector<PyFrame> s = std::move(inner);
    s.push_back({path, line, function, ""});
    s.push_back({"/usr/lib/python3.11/multiprocessing/process.py", 108, "run", ""});
    s.push_back({"/usr/lib/python3.11/multiprocessing/process.py", 314, "_bootstrap", ""});
    s.push_back({"/usr/lib/python3.11/multiprocessing/popen_fork.py", 71, "_launch", ""});
    s.push_back({path, 30, "<module>", ""});
    return s;
  }
};

// After matrix_torch_report.py (tests/python_programs/): the worker under the guard.
TEST(WorkerHome, AFunctionDefinedUnderTheMainGuardIsNotFoundBySpawn) {
  WorkerScript s(
      "import multiprocessing as mp\n"    // 1
      "import torch\n"                    // 2
      "\n"                                // 3
      "if __name__ == \"__main__\":\n"    // 4
      "\n"                                // 5
      "    def train(steps):\n"           // 6
      "        x = torch.ones(2)\n"       // 7
      "        for _ in range(steps):\n"  // 8
      "            x.sum()\n"             // 9
      "        return steps\n");          // 10
  const WorkerHome h = worker_home(s.stack("train", 9, {{"", 0, "<built-in method sum>", ""}}));
  EXPECT_EQ(h.where, Where::kUnderGuard);
  EXPECT_EQ(h.function, "train");
  EXPECT_EQ(h.line, 6);
}

TEST(WorkerHome, AModuleLevelFunctionIsFound) {
  WorkerScript s(
      "import multiprocessing as mp\n"
      "\n"
      "def work(q):\n"      // 3
      "    if q:\n"         // 4
      "        q.put(1)\n"  // 5
      "\n"
      "if __name__ == '__main__':\n"
      "    mp.Process(target=work).start()\n");
  const WorkerHome h = worker_home(s.stack("work", 5));
  EXPECT_EQ(h.where, Where::kTopLevel);
  EXPECT_EQ(h.line, 3);
}

TEST(WorkerHome, AFunctionInsideAnotherIsNested) {
  WorkerScript s(
      "def main():\n"
      "    def work():\n"  // 2
      "        pass\n"     // 3
      "    return work\n");
  EXPECT_EQ(worker_home(s.stack("work", 3)).where, Where::kNested);
}

// A Pool's task runs past pool.py's worker loop and its star helpers: the task is what must be
// found, not pool.py's worker.
TEST(WorkerHome, APoolsTaskIsTheFunctionLookedAt) {
  WorkerScript s(
      "if __name__ == '__main__':\n"
      "    def square(x):\n"  // 2
      "        return x * x\n");
  std::vector<PyFrame> stack = {{s.path, 3, "square", ""},
                                {"/usr/lib/python3.11/multiprocessing/pool.py", 48, "mapstar", ""},
                                {"/usr/lib/python3.11/multiprocessing/pool.py", 125, "worker", ""},
                                {"/usr/lib/python3.11/multiprocessing/process.py", 108, "run", ""}};
  const WorkerHome h = worker_home(stack);
  EXPECT_EQ(h.function, "square");
  EXPECT_EQ(h.where, Where::kUnderGuard);
}

// A method of a class at the top level is found by its qualified name (a bound method pickles
// so); one of a class under the guard is not.
TEST(WorkerHome, AMethodIsWhereItsClassIs) {
  WorkerScript top(
      "class Trainer:\n"
      "    class Inner:\n"
      "        def step(self):\n"    // 3
      "            pass\n"           // 4
      "    def run_worker(self):\n"  // 5
      "        pass\n");             // 6
  EXPECT_EQ(worker_home(top.stack("run_worker", 6)).where, Where::kTopLevel);
  EXPECT_EQ(worker_home(top.stack("run_worker", 6)).in_class, "Trainer");
  EXPECT_EQ(worker_home(top.stack("step", 4)).where, Where::kTopLevel);
  WorkerScript guarded(
      "if __name__ == '__main__':\n"
      "    class Trainer:\n"
      "        def run_worker(self):\n"
      "            pass\n");
  EXPECT_EQ(worker_home(guarded.stack("run_worker", 4)).where, Where::kUnderGuard);
  WorkerScript local(
      "def main():\n"
      "    class Trainer:\n"
      "        def run_worker(self):\n"
      "            pass\n");
  EXPECT_EQ(worker_home(local.stack("run_worker", 4)).where, Where::kNested);
}

// A ProcessPoolExecutor's task runs past concurrent.futures' worker: the task is looked at.
TEST(WorkerHome, AnExecutorsTaskIsTheFunctionLookedAt) {
  WorkerScript s(
      "def main():\n"
      "    def task(x):\n"
      "        return x\n");
  const std::vector<PyFrame> stack = {
      {s.path, 3, "task", ""},
      {"/usr/lib/python3.11/concurrent/futures/process.py", 246, "_process_worker", ""},
      {"/usr/lib/python3.11/multiprocessing/process.py", 108, "run", ""}};
  const WorkerHome h = worker_home(stack);
  EXPECT_EQ(h.function, "task");
  EXPECT_EQ(h.where, Where::kNested);
}

// A def whose signature spans lines (its "):" at the def's own indent) is still found.
TEST(WorkerHome, AMultiLineSignatureIsFound) {
  WorkerScript s(
      "if __name__ == '__main__':\n"
      "    def train(\n"  // 2
      "        steps,\n"
      "        scale=lambda x: x * 2,\n"
      "    ):\n"
      "        return scale(steps)\n");  // 6
  const WorkerHome h = worker_home(s.stack("train", 6));
  EXPECT_EQ(h.where, Where::kUnderGuard);
  EXPECT_EQ(h.line, 2);
}

// functools.wraps gives a decorator's wrapper the decorated function's name, by which pickle
// finds it: nothing is said of where the wrapper is defined.
TEST(WorkerHome, ADecoratorsWrapperIsNotTakenForALocalFunction) {
  WorkerScript s(
      "import functools\n"
      "def logged(f):\n"
      "    @functools.wraps(f)\n"
      "    def wrapper(*a):\n"  // 4
      "        return f(*a)\n"  // 5
      "    return wrapper\n"
      "@logged\n"
      "def work(x):\n"
      "    return x\n");
  EXPECT_EQ(worker_home(s.stack("wrapper", 5)).where, Where::kUnknown);
}

// A Process subclass that overrides run(): process.py's _bootstrap calls it, and its class is
// what a spawned worker must find.
TEST(WorkerHome, AProcessSubclassesRunIsItsWorkerAndItsClassWhatMustMove) {
  WorkerScript s(
      "import multiprocessing as mp\n"
      "if __name__ == '__main__':\n"
      "    class Worker(mp.Process):\n"  // 3
      "        def run(self):\n"         // 4
      "            pass\n");             // 5
  const std::vector<PyFrame> stack = {
      {s.path, 5, "run", ""},
      {"/usr/lib/python3.11/multiprocessing/process.py", 314, "_bootstrap", ""},
      {"/usr/lib/python3.11/multiprocessing/popen_fork.py", 71, "_launch", ""}};
  const WorkerHome h = worker_home(stack);
  EXPECT_EQ(h.function, "run");
  EXPECT_EQ(h.where, Where::kUnderGuard);
  EXPECT_EQ(h.in_class, "Worker");
  EXPECT_EQ(h.class_line, 3);
}

TEST(WorkerHome, WhatCannotBeToldIsUnknown) {
  // No process.py run: not a worker.
  EXPECT_TRUE(worker_home({{"/x.py", 3, "f", ""}}).function.empty());
  // A file that cannot be read.
  const WorkerHome gone = worker_home(WorkerScript("").stack("f", 3));
  EXPECT_EQ(gone.where, Where::kUnknown);
  // Defined in another top-level block (a platform check): it may or may not run on import.
  WorkerScript s(
      "import sys\n"
      "if sys.platform == 'linux':\n"
      "    def work():\n"  // 3
      "        pass\n");   // 4
  EXPECT_EQ(worker_home(s.stack("work", 4)).where, Where::kUnknown);
}

TEST(WorkerHome, EachProcessOnceFromTheStacksAtTheEndOrTheStall) {
  WorkerScript s(
      "if __name__ == '__main__':\n"
      "    def train():\n"
      "        pass\n");
  Stacks end, stall;
  ThreadStack t;
  t.pid = 42;
  t.python = s.stack("train", 3);
  end.threads = {t, t};
  t.pid = 43;
  stall.threads = {t};
  ThreadStack plain;  // a native thread: nothing to read
  plain.pid = 44;
  end.threads.push_back(plain);
  const auto homes = worker_homes(end, stall);
  ASSERT_EQ(homes.size(), 2u) << homes.dump();
  EXPECT_EQ(homes[0]["pid"], 42);
  EXPECT_EQ(homes[0]["home"], "main-guard");
  EXPECT_EQ(homes[0]["function"], "train");
  EXPECT_EQ(homes[1]["pid"], 43);
}

}  // namespace
}  // namespace fc::harness
