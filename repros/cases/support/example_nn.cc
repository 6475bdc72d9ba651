#include "cases/support/example_nn.h"

#include <unistd.h>

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <forkcheck/launch.h>
#include "cases/support/stand_in_device.h"
#include "core/channel.h"
#include "core/detail_views.h"
#include "core/pool.h"
#include "launch/process.h"

namespace fc::example_nn {
namespace {

struct ExampleNNImpl : torch::nn::Module {
  ExampleNNImpl() : fc(register_module("fc", torch::nn::Linear(10, 1))) {}
  torch::Tensor forward(const torch::Tensor& x) { return torch::sigmoid(fc->forward(x)); }
  torch::nn::Linear fc;
};
TORCH_MODULE(ExampleNN);

struct Trained {
  std::vector<double> losses;
  double param_norm = 0;
};

// The source's train(xs, target), for `steps` steps. c10::Error's what() carries a C++ backtrace;
// the message alone is what Python users see, so that is what goes back.
Trained train(const torch::Tensor& x, const torch::Tensor& t, int steps, double lr) {
  try {
    ExampleNN model;
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(lr));
    Trained r;
    for (int i = 0; i < steps; ++i) {
      auto out = model->forward(x);
      auto loss = torch::binary_cross_entropy(out, t);
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      r.losses.push_back(loss.item<double>());
    }
    double sq = 0;
    for (const auto& p : model->parameters()) sq += p.detach().pow(2).sum().item<double>();
    r.param_norm = std::sqrt(sq);
    return r;
  } catch (const c10::Error& e) {
    throw std::runtime_error(e.what_without_backtrace());
  }
}

std::vector<float> to_vector(const torch::Tensor& t) {
  auto c = t.contiguous();
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}

torch::Tensor from_json(const nlohmann::json& j, at::IntArrayRef shape) {
  auto v = j.get<std::vector<float>>();
  return torch::tensor(v).reshape(shape);
}

FORKCHECK_WORKER(train_example_nn) {
  if (payload.at("stand_in_device").get<bool>()) register_stand_in_device();
  torch::manual_seed(payload.at("seed").get<uint64_t>());
  auto x = from_json(payload.at("x"), {1, 5, 10});
  auto t = from_json(payload.at("t"), {1, 5, 1});
  auto r = train(x, t, payload.at("steps").get<int>(), payload.at("lr").get<double>());
  return {{"message", "train finished"},
          {"pid", fc::launch::current_process_id()},
          {"losses", r.losses},
          {"param_norm", r.param_norm},
          {"threads_after_training", launch::thread_count()}};
}

// What the reports show of the pool: one row per worker (how it ended, its first and last loss,
// its parameters' norm) and each worker's loss curve.
void add_worker_views(nlohmann::json& details, const nlohmann::json& workers) {
  std::vector<nlohmann::json> rows;
  std::vector<detail_views::Series> curves;
  for (const auto& w : workers) {
    const auto status = w.value("status", std::string("?"));
    const auto r = w.value("result", nlohmann::json::object());
    const auto losses =
        r.is_object() ? r.value("losses", std::vector<double>{}) : std::vector<double>{};
    const auto index = w.value("index", 0);
    nlohmann::json first, last, norm;  // null: the worker did not get that far
    if (!losses.empty()) {
      first = losses.front();
      last = losses.back();
    }
    if (r.is_object() && r.contains("param_norm")) norm = r["param_norm"];
    const auto said =
        status == "ok" ? (r.is_object() ? r.value("message", std::string("ok")) : std::string("ok"))
                       : w.value("error", status);
    rows.push_back(detail_views::row(
        {index, w.value("pid", nlohmann::json()), said, first, last, norm}, status));
    curves.push_back({"worker " + std::to_string(index), losses});
  }
  detail_views::add_table(details, "the workers",
                          {"worker", "pid", "result", "first loss", "final loss", "param_norm"},
                          std::move(rows));
  detail_views::add_chart(details, "training loss of each worker", "step", "loss (BCE)", curves);
}

}  // namespace

int accelerator_devices() { return real_accelerator_devices(); }

CaseResult run_pool(const VariantSpec& variant, const PoolPlan& plan) {
  nlohmann::json details;
  details["plan"] = {{"workers", plan.workers},
                     {"steps", plan.steps},
                     {"lr", plan.lr},
                     {"stand_in_device", plan.stand_in_device}};
  details["accelerator_devices"] = real_accelerator_devices();
  if (plan.stand_in_device) register_stand_in_device();

  torch::manual_seed(0);
  auto x = torch::rand({1, 5, 10});
  auto t = torch::tensor({0.f, 1.f, 1.f, 0.f, 1.f}).reshape({1, 5, 1});
  details["parent_threads_before_training"] = launch::thread_count();
  auto parent = train(x, t, 1, plan.lr);  // the source's train(x, t) before starting workers
  // Autograd starts device threads (and arms its fork check) only for a non-CPU device: this
  // count is the evidence of which of the two happened here.
  details["parent_threads_after_training"] = launch::thread_count();
  details["parent_loss"] = parent.losses.front();

  channel::send_details(details);

  std::vector<nlohmann::json> payloads;
  for (int i = 0; i < plan.workers; ++i)
    payloads.push_back({{"seed", i + 1},
                        {"x", to_vector(x)},
                        {"t", to_vector(t)},
                        {"steps", plan.steps},
                        {"lr", plan.lr},
                        {"stand_in_device", plan.stand_in_device}});
  auto workers = start_pool(variant, "train_example_nn", payloads);
  auto pool = join_pool(workers, std::chrono::seconds(60));
  add_worker_views(details, pool.workers);
  return to_case_result(std::move(pool), details);
}

}  // namespace fc::example_nn
