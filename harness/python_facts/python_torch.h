// Which torch a Python program of this machine would import, found without importing it: the
// catalog's torch cases run against the libtorch forkcheck was built with, and a user whose pip or
// conda torch is another one must be told so (reports/whose_torch.h says it). The interpreter
// only locates the package (importlib's find_spec, a few milliseconds); its torch/version.py is
// read here, and its lib/ folder's libtorch_cpu resolved, so that "the same libtorch" is a fact
// about files, not a guess from version strings.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fc::harness {

// `python`: a name looked up in PATH or a path. Never throws. The result:
//   {"interpreter": path, "status": "found", "version": "2.3.0+cu121", "cuda": "12.1" or null,
//    "git_version", "package_dir": ".../site-packages/torch",
//    "libtorch_cpu": the real path of package_dir/lib's libtorch_cpu, or absent (Debian's
//                    python3-torch links it from /usr/lib)}
//   {"interpreter", "status": "no-torch"}         the interpreter finds no torch package
//   {"status": "no-python", "error": why}        no such interpreter
//   {"interpreter", "status": "failed", "error"} it could not answer (exit status, deadline)
nlohmann::json find_python_torch(const std::string& python = "python3");

// What torch/version.py says (its `key = 'value'` lines; None as null): {"version", "cuda",
// "git_version", "debug"}. For the tests: a version.py written by hand.
nlohmann::json parse_torch_version_py(const std::string& text);

}  // namespace fc::harness
