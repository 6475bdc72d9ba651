// tiny-nn-spawn (source 000): the headline demo. The source's ExampleNN trained by 5 workers
// started with spawn (and forkserver), each for enough steps that its loss visibly goes down,
// beside the fork variant that fails with libtorch's autograd error.
#include <string>

#include "cases/support/example_nn.h"

namespace {
namespace tiny_nn_spawn {

using fc::Outcome;

constexpr int kSteps = 60;
constexpr double kLr = 0.5;  // large enough that 60 steps show a clear descent on 5 samples

std::vector<fc::VariantSpec> variants() {
  return {
      fc::fix(
          "spawn", "spawn", "each worker is a fresh exec with its own autograd engine",
          "parent (with the device backend) trains once; 5 spawned workers train 60 steps each"),
      fc::fix("forkserver", "forkserver",
              "workers are forked by a server started before the parent's first backward()",
              "as `spawn`, workers forked by the forkserver"),
      fc::hazard("fork-device-backend", "fork", Outcome::kError,
                 "with a non-CPU device (here the stand-in backend for CUDA/MPS) autograd's fork "
                 "check is armed in the parent and trips in every fork child",
                 "as `spawn`, workers fork-started"),
  };
}

// A fixed variant is only `ok` when every worker finished and its loss really went down.
fc::CaseResult run(const fc::VariantSpec& variant) {
  fc::example_nn::PoolPlan plan;
  plan.steps = kSteps;
  plan.lr = kLr;
  plan.stand_in_device = true;
  auto r = fc::example_nn::run_pool(variant, plan);
  if (r.outcome != Outcome::kOk) return r;
  for (const auto& w : r.details["workers"]) {
    const auto& losses = w["result"]["losses"];
    double first = losses.front().get<double>(), last = losses.back().get<double>();
    if (static_cast<int>(losses.size()) != kSteps || !(last < 0.8 * first)) {
      r.outcome = Outcome::kError;
      r.message = "worker " + std::to_string(w["index"].get<int>()) +
                  "'s loss did not go down: " + std::to_string(first) + " -> " +
                  std::to_string(last);
      return r;
    }
  }
  r.message = "all 5 workers finished training; every loss went down";
  return r;
}

FORKCHECK_CASE(tiny_nn_spawn_case) {
  fc::CaseDef c;
  c.id = "tiny-nn-spawn";
  c.title = "The tiny ExampleNN trained by 5 workers under spawn";
  c.source_title = "PyTorchのマルチプロセス学習でハマったところ";
  c.source_author = "M・W (Mynavi AI戦略室)";
  c.source_doc = "000";
  c.reported =
      "With mp.get_context('spawn') the five workers each print \"trainメソッドが終了したよ\" "
      "(train finished) where fork raised the autograd error." +
      std::string(fc::example_nn::kSourceSgdNote);
  c.mechanism =
      "spawn starts each worker as a fresh process that loads the program again and receives "
      "its inputs serialized; nothing of the parent's autograd threads or fork handlers exists "
      "in it. forkserver gets the same clean state from a server forked before any thread.";
  c.platforms = "everywhere (spawn is the default on macOS and the only method on Windows)";
  c.variants = &variants;
  c.run = &run;
  // What in the environment may explain a change of its outcome (forkcheck diff).
  c.environment_topics = {"libtorch", "cuda", "torch-threads", "start-methods"};
  c.featured = true;  // the reports lead with its workers and their loss curves
  return c;
}

}  // namespace tiny_nn_spawn
}  // namespace
