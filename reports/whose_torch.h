// Whose torch: the catalog's torch cases run against the libtorch forkcheck was built with, which
// may not be the torch a user's Python imports (a pip or conda wheel). Said beside every report's
// libtorch line and by `forkcheck list`, from facts: the real path of the libtorch_cpu each side
// maps (harness/python_facts/python_torch.h finds the Python side without importing it).
#pragma once

#include <optional>
#include <string>

#include "reports/model/report_model.h"

namespace fc::reports {

// The catalog's libtorch as a run's environment records it (library: the real path of the
// libtorch_cpu the collecting program mapped, when it says), or none when no torch program
// collected the environment.
std::optional<CatalogLibtorch> catalog_libtorch(const Environment& env);

// Said where a forkcheck built without libtorch and without a torch kit (a native build from
// source; reports/torch_cases.h says what a package with a kit does) ran or lists the catalog:
// which cases it does not hold, and why.
inline constexpr const char* kNoTorchProgram =
    "none: this forkcheck was built without libtorch and holds no torch kit to build its torch "
    "cases with, so it runs none of them; a forkcheck built from source against libtorch runs "
    "them, and the Linux archive and wheel build them on first use";

// Whether a run's environment says its forkcheck had no torch program (kNoTorchProgram).
bool built_without_torch(const Environment& env);

// "1.13.0 (/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13.0)".
std::string libtorch_text(const CatalogLibtorch& libtorch);

// What the Python torch found (python_torch.h's record) is beside the catalog's `libtorch`, in one
// sentence, with where to go when it is another one: "python3 (/usr/bin/python3) imports torch
// 1.13.0a0 on the same libtorch (...)", "... imports torch 2.3.0+cu121 (CUDA 12.1): another
// libtorch than the catalog's ...". "" when there is no `python_torch`.
std::string python_torch_sentence(const std::optional<CatalogLibtorch>& libtorch,
                                  const std::optional<EnvPythonTorch>& python_torch);

}  // namespace fc::reports
