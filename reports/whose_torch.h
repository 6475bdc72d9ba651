// Whose torch: the catalog's torch cases run against the libtorch forkcheck was built with, which
// may not be the torch a user's Python imports (a pip or conda wheel). Said beside every report's
// libtorch line and by `forkcheck list`, from facts: the real path of the libtorch_cpu each side
// maps (harness/python_facts/python_torch.h finds the Python side without importing it).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fc::reports {

// The catalog's libtorch as a run's environment records it: {"version", "library"} (library: the
// real path of the libtorch_cpu the collecting program mapped, when it says), or null when no
// torch program collected the environment.
nlohmann::json catalog_libtorch(const nlohmann::json& env);

// Said where a forkcheck built without libtorch and without a torch kit (a native build from
// source; reports/torch_cases.h says what a package with a kit does) ran or lists the catalog:
// which cases it does not hold, and why.
inline constexpr const char* kNoTorchProgram =
    "none: this forkcheck was built without libtorch and holds no torch kit to build its torch "
    "cases with, so it runs none of them; a forkcheck built from source against libtorch runs "
    "them, and the Linux archive and wheel build them on first use";

// Whether a run's environment says its forkcheck had no torch program (kNoTorchProgram).
bool built_without_torch(const nlohmann::json& env);
// The same, of the environment's collected_by.
bool collected_without_torch(const nlohmann::json& collected_by);

// "1.13.0 (/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13.0)": a libtorch as catalog_libtorch
// gives it.
std::string libtorch_text(const nlohmann::json& libtorch);

// What the Python torch found (python_torch.h's record) is beside the catalog's `libtorch`, in one
// sentence, with where to go when it is another one: "python3 (/usr/bin/python3) imports torch
// 1.13.0a0 on the same libtorch (...)", "... imports torch 2.3.0+cu121 (CUDA 12.1): another
// libtorch than the catalog's ...". "" when `python_torch` is not a record.
std::string python_torch_sentence(const nlohmann::json& libtorch,
                                  const nlohmann::json& python_torch);

}  // namespace fc::reports
