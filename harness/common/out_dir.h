// The folder a command writes its reports into (--out), shared by every command that writes one.
#pragma once

#include <filesystem>

namespace fc::harness {

// Makes sure `dir` exists and is writable; throws UsageError naming the problem.
void prepare_out_dir(const std::filesystem::path& dir);

}  // namespace fc::harness
