// The source's ExampleNN (source 000): Linear(10, 1) then sigmoid, BCE loss, SGD, input 1x5x10,
// target [0, 1, 1, 0, 1]. Shared by autograd-after-fork and tiny-nn-spawn, which differ only in
// what they show: the first the fork error, the second the training that works under spawn.
#pragma once

#include <string>

#include "core/case_registry.h"

namespace fc::example_nn {

// What the source's program meets before any process is started, checked with Debian's
// python3-torch 1.13: its optimizer has no learning rate.
inline constexpr const char* kSourceSgdNote =
    " (The source's `optim.SGD(model.parameters())` names no `lr`; torch 1.13 refuses it before "
    "any training with `ValueError: parameter group didn't specify a value of required "
    "optimization parameter lr`. forkcheck gives SGD a learning rate; what else a case changes "
    "(workers, steps, a stand-in device) its variants say.)";

struct PoolPlan {
  int workers = 5;
  int steps = 1;  // training steps per worker (the source trains once)
  // The source's optim.SGD(model.parameters()) names no lr, which torch refuses (ValueError: see
  // kSourceSgdNote): a small one, so that one step changes little.
  double lr = 1e-3;
  bool stand_in_device = false;  // register the stand-in non-CPU device in parent and workers
};

// The source's program: the parent trains once, then `plan.workers` workers each train, started
// with the variant's start method. Returns the pool's outcome with the evidence in details.
CaseResult run_pool(const VariantSpec& variant, const PoolPlan& plan);

// Whether a real accelerator is present, and what that means for a fork child's backward().
int accelerator_devices();

}  // namespace fc::example_nn
