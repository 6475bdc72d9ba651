// `forkcheck matrix [--timeout S] [--hang-after S] -- CMD ARGS...`: the user's Python program
// under each start method this platform has (fork, spawn, forkserver), one after the other, each
// supervised as `exec` supervises it, in one report whose variants are the methods.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "harness/session/subject_command.h"

namespace fc::harness {

struct MatrixOptions {
  std::vector<std::string> argv;     // forkcheck's own command line, for the report
  std::vector<std::string> command;  // what to run
  std::filesystem::path out;         // empty: a new run folder (session/out_dir.h)
  double timeout_s = 0;              // per method; 0: kMatrixDefaultTimeoutS
  LiveOptions live;
};

// Each method's run ends by this deadline unless --timeout says otherwise: a spawned worker of a
// module without a __main__ guard fails at start, and a Pool starts new ones for ever.
constexpr double kMatrixDefaultTimeoutS = 120;

// Whether the start method can be set for `program` (resolved): a Python interpreter, a script
// whose #! names one, or a program built on forkcheck::launch (it reads FORKCHECK_START_METHOD);
// `why` says what it is otherwise.
bool start_method_settable(const std::string& program, std::string& why);

// 0 when the program was ok under every method, 1 when it was not under one (the finding names
// which), 128+N when interrupted; throws UsageError for a command that does not exist or whose
// start method cannot be set.
int matrix_command(const MatrixOptions& options);

}  // namespace fc::harness
