// The torch worker of `--bench`: its first line records the time; then it runs a small torch op
// (so the measurement is of a worker that really has libtorch) and reports its memory.
#include <torch/torch.h>

#include <forkcheck/launch.h>
#include "core/bench.h"

FORKCHECK_WORKER(bench_torch) {
  long long t = fc::bench::monotonic_ns();
  double sum = torch::ones({64}).sum().item<double>();
  nlohmann::json r = fc::bench::memory_kib();
  r["first_line_ns"] = t;
  r["torch_op"] = sum;
  return r;
}
