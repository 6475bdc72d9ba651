// autograd-after-fork (source 000): the parent ran backward(), then fork-started workers call
// backward() and libtorch refuses: "Unable to handle autograd's threading in combination with
// fork-based multiprocessing". The check is armed only when autograd created device threads, i.e.
// when a non-CPU device exists; on a CPU-only libtorch the fork child trains fine, and we say so.
#include "cases/support/example_nn.h"

namespace {
namespace autograd_after_fork {

using fc::Outcome;

// The source starts 5 workers; 2 show the same in every variant (each fork child's backward()
// fails, each spawned or forkserver worker trains) at two fifths of spawn's start-up, where
// every worker loads libtorch again. tiny-nn-spawn keeps the source's 5.
constexpr int kWorkers = 2;

std::vector<fc::VariantSpec> variants() {
  const bool accel = fc::example_nn::accelerator_devices() > 0;
  const char* stand_in_why =
      "a PrivateUse1 device guard reporting one device stands in for CUDA/MPS: autograd starts a "
      "device thread for it and registers its pthread_atfork child handler, so the fork child's "
      "backward() hits libtorch's own TORCH_CHECK";
  return {
      fc::hazard(
          "fork", "fork", accel ? Outcome::kError : Outcome::kOk,
          accel
              ? "an accelerator is present: autograd started device threads and armed its fork "
                "check, so the fork child's backward() throws"
              : "this libtorch has no non-CPU device: autograd ran on the calling thread, started "
                "no device threads and armed no fork check, so the fork child trains fine (as the "
                "Python original does on a CPU-only torch)",
          "the source's program: parent trains once, fork-started workers (2; the source "
          "has 5) train once"),
      fc::hazard("fork-device-backend", "fork", Outcome::kError, stand_in_why,
                 "as `fork`, with a non-CPU device backend registered in the parent"),
      fc::fix(
          "spawn", "spawn", "a spawned worker is a fresh exec: its autograd engine never forked",
          "as `fork-device-backend`, workers spawned (each registers the device backend itself)"),
      fc::fix("forkserver", "forkserver",
              "the server was forked before the parent's first backward(): its children inherit "
              "no autograd threads",
              "as `fork-device-backend`, workers forked by a server started before any thread"),
  };
}

fc::CaseResult run(const fc::VariantSpec& variant) {
  fc::example_nn::PoolPlan plan;
  plan.workers = kWorkers;
  plan.stand_in_device = variant.name != "fork";
  return fc::example_nn::run_pool(variant, plan);
}

FORKCHECK_CASE(autograd_after_fork_case) {
  fc::CaseDef c;
  c.id = "autograd-after-fork";
  c.title = "backward() in the parent, then backward() in fork-started workers";
  c.source_title = "PyTorchのマルチプロセス学習でハマったところ";
  c.source_author = "M・W (Mynavi AI戦略室)";
  c.source_doc = "000";
  c.reported =
      "After train(x, t) in the parent, five fork-started workers fail in backward() with "
      "\"RuntimeError: Unable to handle autograd's threading in combination with fork-based "
      "multiprocessing. See https://github.com/pytorch/pytorch/wiki/Autograd-and-Fork\"; without "
      "the parent's train() they work, and with spawn all five print that training finished." +
      std::string(fc::example_nn::kSourceSgdNote);
  c.mechanism =
      "torch/csrc/autograd/engine.cpp: Engine::start_device_threads() starts one thread per "
      "non-CPU device and, before doing so, registers a pthread_atfork child handler that sets "
      "in_bad_autograd_fork. Every backward() goes through initialize_device_threads_pool(), whose "
      "TORCH_CHECK(!in_bad_autograd_fork) throws in such a child. With no non-CPU device no "
      "thread is started and no handler is registered.";
  c.platforms = "Linux and macOS with an accelerator backend (CUDA, MPS, XPU, PrivateUse1)";
  c.variants = &variants;
  c.run = &run;
  c.explains = {
      {"Unable to handle autograd's threading in combination with fork-based multiprocessing",
       "the parent ran backward() before it forked: start workers with spawn or forkserver "
       "(multiprocessing.get_context(\"spawn\")), or fork before any backward()"},
  };
  // What in the environment may explain a change of its outcome (forkcheck diff).
  c.environment_topics = {"cuda", "libtorch", "start-methods"};
  return c;
}

}  // namespace autograd_after_fork
}  // namespace
