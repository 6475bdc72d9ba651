#include "cases/support/scripted_net.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

namespace fc::cases::scripted_net {
namespace {

const char* kForward = R"JIT(
def forward(self, x):
    h = torch.relu(torch.matmul(x, self.w1) + self.b1)
    policy = torch.matmul(h, self.wp) + self.bp
    value = torch.tanh(torch.matmul(h, self.wv) + self.bv)
    return policy, value
)JIT";

}  // namespace

torch::jit::Module build() {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(1);
  torch::jit::Module m(kClassName);
  auto init = [&](int64_t in, int64_t out) {
    return torch::randn({in, out}, gen) / std::sqrt(static_cast<double>(in));
  };
  m.register_parameter("w1", init(kFeatures, kHidden), false);
  m.register_parameter("b1", torch::randn({kHidden}, gen) * 0.1, false);
  m.register_parameter("wp", init(kHidden, kMoves), false);
  m.register_parameter("bp", torch::randn({kMoves}, gen) * 0.1, false);
  m.register_parameter("wv", init(kHidden, 1), false);
  m.register_parameter("bv", torch::randn({1}, gen) * 0.1, false);
  m.define(kForward);
  m.eval();
  return m;
}

std::pair<torch::Tensor, torch::Tensor> forward(torch::jit::Module& m, const torch::Tensor& x) {
  torch::NoGradGuard no_grad;
  auto out = m.forward({x}).toTuple();
  return {out->elements()[0].toTensor(), out->elements()[1].toTensor()};
}

// Filled in plain C++: torch's sin() of 16384 elements already goes parallel (VML's grain is
// 2048), and the first parallel op of a fork child should be the one its case announces.
torch::Tensor probe_input() {
  std::vector<float> v(static_cast<size_t>(kBatch * kFeatures));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(std::sin(0.01 * static_cast<double>(i)));
  return torch::from_blob(v.data(), {kBatch, kFeatures}, torch::kFloat).clone();
}

double probe_checksum(torch::jit::Module& m) {
  auto out = forward(m, probe_input());
  return out.first.sum().item<double>() + out.second.sum().item<double>();
}

}  // namespace fc::cases::scripted_net
