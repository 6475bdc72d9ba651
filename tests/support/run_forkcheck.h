// The end-to-end tests' way to run the forkcheck executable (FC_FORKCHECK, defined by CMake for
// each test that uses it): under the supervisor, with its exit status and both outputs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "harness/supervise/supervisor.h"

namespace fc::test_run {

struct Run {
  int code = -1;
  std::string out, err;
};

inline Run forkcheck(std::vector<std::string> args,
                     std::vector<std::pair<std::string, std::string>> env = {}) {
  fc::harness::LaunchSpec spec;
  spec.argv = {FC_FORKCHECK};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = std::move(env);
  spec.timeout_s = 120;
  spec.channel = false;
  auto r = fc::harness::supervise(spec);
  return {r.exit.code, r.out.text(), r.err.text()};
}

}  // namespace fc::test_run
