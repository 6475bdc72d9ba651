// The torch cases of a package without the torch program, in words: built here against the
// user's torch, or not run and why (harness/torch/torch_kit.h finds and builds them; these are its
// facts). Fields of `facts`:
//   source       "built-in" (this build's program), "built-here" (built from the kit) or "none"
//   why          with "none": "no-kit", "no-python", "python-failed", "no-torch", "no-cache",
//                "no-cuda-toolkit", "no-cmake", "no-compiler", "not-built" (it can be built:
//                `all` and `run` do, on first use), "busy", "failed", "interrupted"
//   detail       the fact behind `why` (the path looked at, the build's error lines)
//   cases        the torch cases' ids, as the kit names them
//   python, torch, package_dir   the interpreter, its torch's version and folder
//   build_s, built_at, jobs, compiler, cmake, log, program, built_now   a build's own record
//   last_build   the most recent build recorded here (for another torch): its build_s, jobs, torch
#pragma once

#include <string>

#include "reports/model/report_model.h"

namespace fc::reports {

// "48 s", "4 min 05 s".
std::string minutes_text(double seconds);

// One sentence for `list`, `all`'s finding and every report's environment: "7 (ids), built here
// against the torch /usr/bin/python3 imports (1.13.0a0), from this package's torch kit, on
// 2026-11-28, in 1 min 09 s", or "none run (ids): /usr/bin/python3 imports no torch; ...". "" for
// a build with its own torch program (the libtorch line says it); whose_torch.h's kNoTorchProgram
// for one with neither a torch program nor a kit.
std::string torch_cases_sentence(const TorchCases& facts);

// What a run's environment says of its torch cases: torch_cases_sentence() of its "torch_cases",
// else, for a native build's run recorded before there were kits, whose_torch.h's
// kNoTorchProgram; "" when the run had its own torch program.
std::string run_torch_cases_text(const Environment& env);

// Said before a build starts: what is built, against which torch, where, and how long it may take
// (the last build here, else the measurement of forkcheck's own kit build, with where it was
// measured).
std::string torch_build_announcement(const TorchCases& facts);

// Said when the build has ended: built (how long, where), failed (why, its log) or interrupted.
std::string torch_build_done(const TorchCases& facts);

}  // namespace fc::reports
