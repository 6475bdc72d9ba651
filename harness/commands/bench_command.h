// `forkcheck bench [--out DIR] [--repeat N]`: worker start latency and memory per start method,
// measured here, beside Python multiprocessing's with torch imported (when a Python with torch
// is installed; otherwise the report says it was not measured). Writes bench.json.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fc::harness {

struct BenchOptions {
  std::vector<std::string> argv;
  std::filesystem::path out;  // empty: a new run folder (session/out_dir.h)
  int repeat = 10;
};

int bench_command(const BenchOptions& options);

// Median, min and max of samples (the median of an even count is the mean of the middle two).
nlohmann::json summarize_samples(const nlohmann::json& samples);

}  // namespace fc::harness
