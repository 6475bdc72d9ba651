// The policy/value network of selfplay-pipeline and torchscript-pickle-spawn (source 001): a real
// TorchScript module built in C++ (a torch::jit::Module named Net, as Python's __torch__.Net, its
// forward defined in TorchScript with Module::define), seeded weights, and a fixed probe batch
// whose output tells which weights a process ran.
#pragma once

#include <cstdint>
#include <utility>

#include <torch/script.h>

namespace fc::cases::scripted_net {

// A batch of 256 positions makes 256x256 hidden activations: 65536 elements, above ATen's
// parallel grain of 32768, so the bias add and relu go parallel whenever there are 2 threads.
constexpr int64_t kFeatures = 64, kHidden = 256, kMoves = 32, kBatch = 256;
constexpr const char* kClassName = "Net";  // the source's model class: Python's __torch__.Net

torch::jit::Module build();

// (policy, value) for a batch of positions, without autograd.
std::pair<torch::Tensor, torch::Tensor> forward(torch::jit::Module& m, const torch::Tensor& x);

// The same batch in every process (no random generator), and the sum of the net's outputs on it.
torch::Tensor probe_input();
double probe_checksum(torch::jit::Module& m);

}  // namespace fc::cases::scripted_net
