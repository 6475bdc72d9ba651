// The torch cases of a package without the torch program (the portable archive, the wheel: a
// FORKCHECK_PARTS=native build). Such a package ships the program's sources as a kit
// (cmake/ForkcheckTorchKit.cmake); on first use forkcheck builds the program from it against the
// torch that `python3` imports, as C++ extensions are built (its torch.utils.cmake_prefix_path),
// once per torch, into the user's cache. What is found here are facts (the program, or why there
// is none); reports/torch_cases.h puts them into words.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/platform/install_layout.h"

namespace fc::harness {

// Where builds are kept, one folder per torch: $XDG_CACHE_HOME/forkcheck/torch-cases, else
// $HOME/.cache/forkcheck/torch-cases; empty when neither is set.
std::filesystem::path torch_builds_folder();

// The folder name of one torch's build, "torch-1.13.0a0-0123456789abcdef": its version, and a
// hash of everything that makes a build belong to it (forkcheck's version, the kit, the torch
// package's folder, version, git version and the size and time of its libtorch_cpu or _C module).
std::string torch_build_key(const nlohmann::json& python_torch, const std::filesystem::path& kit,
                            const std::string& kit_manifest);

struct TorchCases {
  std::string program;   // the torch program to run; "" when there is none
  nlohmann::json facts;  // what reports/torch_cases.h words (its header lists the fields)
};

// This forkcheck's torch cases, found without building anything (once per process: it starts
// python3 to locate its torch).
const TorchCases& torch_cases();

// torch_cases(), built first where they are not yet and can be, the build said on `say` before it
// starts (with how long it may take, from measurements) and as it goes. Ctrl-C ends the build and
// leaves nothing half-made.
const TorchCases& build_torch_cases(std::FILE* say);

}  // namespace fc::harness
