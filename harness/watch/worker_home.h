// Where a worker's function is defined, read from its file. A worker started with spawn or
// forkserver imports the main script again (as __mp_main__) and looks its target, or its Pool
// task, up there by name: a function defined at the module's top level is found; one defined under
// `if __name__ == "__main__":` or inside another function is not, and the worker fails at start.
// So the advice to start workers with spawn or forkserver must say to move the function first,
// and only where it must move.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/stacks/stacks.h"
#include "harness/supervise/supervisor.h"

namespace fc::harness {

struct WorkerHome {
  enum class Where { kTopLevel, kUnderGuard, kNested, kUnknown };
  // kUnknown: no worker function in the stack, its file cannot be read, or its definition is
  // not one this reading is sure of (inside another top-level block, a decorator's doing...).
  Where where = Where::kUnknown;
  std::string function;
  std::string file;
  int line = 0;  // its `def` line
  // A method: the outermost class it is defined in, and that class's line (what must move).
  std::string in_class;
  int class_line = 0;
};

// The function a worker process runs (innermost first, as the stacks have it): the first frame
// inner of multiprocessing's process.py `run` that is not multiprocessing's or
// concurrent.futures' own (a Process's target; a Pool's or an executor's task), or a Process
// subclass's own run(). Where it is defined, from its file.
WorkerHome worker_home(const std::vector<PyFrame>& python);

// Of every process whose threads run a worker function in the stacks taken at the end or at the
// stall, once per process: [{pid, function, file, line, home: "module", "main-guard", "nested"
// or "unknown", and for a method: class, class_line}].
nlohmann::json worker_homes(const Stacks& at_end, const Stacks& at_stall);

// exec and matrix: what the finding's advice to start workers with spawn or forkserver rests on,
// into the variant's details: where each fork made beside live threads started, against the main
// guard (fork_guards, main_guard.h), and where each worker's function is defined (worker_homes).
void add_start_method_facts(const ChildResult& r, nlohmann::json& details);

}  // namespace fc::harness
