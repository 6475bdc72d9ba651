#include "harness/commands/matrix_command.h"

#include <algorithm>
#include <fstream>
#include <iterator>

#include "harness/base/exit_status_codes.h"
#include "harness/base/usage_error.h"
#include "harness/session/out_dir.h"
#include "harness/session/program_lookup.h"
#include "harness/supervise/interrupt.h"
#include "harness/watch/worker_home.h"

namespace fc::harness {
namespace {

bool named_python(const std::filesystem::path& p) {
  return p.filename().string().rfind("python", 0) == 0;
}

}  // namespace

bool start_method_settable(const std::string& program, std::string& why) {
  std::error_code ec;
  if (named_python(program) || named_python(std::filesystem::canonical(program, ec))) return true;
  std::ifstream in(program, std::ios::binary);
  std::string first;
  std::getline(in, first);
  if (first.rfind("#!", 0) == 0) {
    if (first.find("python") != std::string::npos) return true;
    why = "a script run by " + first.substr(2) + ", not by Python";
    return false;
  }
  // A program built on forkcheck::launch holds the variable's name (harness-free C++ workers).
  in.seekg(0);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.find("FORKCHECK_START_METHOD") != std::string::npos) return true;
  why = "neither a Python interpreter nor a program built on forkcheck::launch";
  return false;
}

int matrix_command(const MatrixOptions& options) {
  if (options.command.empty())
    throw UsageError("matrix: no command given (forkcheck matrix -- python3 train.py)");
  const std::string program = resolve_command(options.command.front(), "matrix");
  if (std::string why; !start_method_settable(program, why))
    throw UsageError("matrix: the start method cannot be set for " + program + ": it is " + why +
                     " (run the Python interpreter itself: forkcheck matrix -- python3 SCRIPT)");
  SubjectCommand subject;
  subject.name = "matrix";
  subject.argv = options.argv;
  subject.command = options.command;
  subject.timeout_s = options.timeout_s > 0 ? options.timeout_s : kMatrixDefaultTimeoutS;
  subject.live = options.live;
  // matrix asks whether the workers work under each method: one whose exit code the program
  // read still failed there.
  if (subject.live.worker_failures.empty()) subject.live.worker_failures = "fail";
#ifdef _WIN32
  subject.start_methods = {"spawn"};  // Windows has no other
#else
  subject.start_methods = {"fork", "spawn", "forkserver"};
#endif
  subject.out = make_out_dir(options.out, "matrix");
  // What the finding's advice to use spawn or forkserver rests on (worker_home.h).
  subject.annotate = [](const ChildResult& r, nlohmann::json& details, std::string&) {
    add_start_method_facts(r, details);
  };
  const SubjectResult done = run_subject(subject, program);
  if (done.interrupted) return interrupted_exit_status();
  return done.all_ok ? exit_status::kOk : exit_status::kFinding;
}

}  // namespace fc::harness
