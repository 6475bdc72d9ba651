// `forkcheck env [--json] [--python PATH] [--timeout S]`: the environment fingerprint alone, as a
// bug ticket needs it: forkcheck's and libtorch's side, the Python side
// (python_facts/python_probe.h), what forkcheck measured of the machine, and the risks those show.
#pragma once

#include <string>

namespace fc::harness {

struct EnvOptions {
  bool json = false;
  std::string python = "python3";  // looked up in PATH unless it names a directory
  bool python_named = false;       // --python given: one that cannot be run is a usage error
  double timeout_s = 30;           // each probe's deadline
};

// Prints the fingerprint (JSON: session/environment_probe.h's ticket_environment()); kOk, or kError
// (base/exit_status_codes.h) when the repro programs could not report theirs. A Python without
// torch, or a probe that failed, is a fact about the machine, said in the output: still kOk.
// Throws UsageError for a --python that cannot be run.
int print_environment(const EnvOptions& options);

}  // namespace fc::harness
