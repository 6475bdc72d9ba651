#include "core/pool.h"

#include "core/channel.h"

#include <signal.h>
#include <string.h>

#include <stdexcept>

namespace fc {
namespace {

using Clock = std::chrono::steady_clock;

std::string describe(const launch::WorkerOutcome& o) {
  switch (o.status) {
    case launch::WorkerOutcome::Status::kOk: return "finished";
    case launch::WorkerOutcome::Status::kError: return o.error;
    case launch::WorkerOutcome::Status::kCrash:
      return std::string("killed by ") + sigabbrev_np(o.signal) + " (" + strsignal(o.signal) + ")" +
             (o.core_dumped ? ", core dumped" : "");
  }
  return "?";
}

nlohmann::json worker_json(size_t index, const launch::Worker& w, const launch::WorkerOutcome& o) {
  nlohmann::json j = {{"index", index},
                      {"pid", w.pid()},
                      {"status", launch::to_string(o.status)},
                      {"seconds", o.seconds}};
  if (o.status == launch::WorkerOutcome::Status::kOk) j["result"] = o.result;
  if (o.status != launch::WorkerOutcome::Status::kOk) j["error"] = describe(o);
  if (o.signal != 0) j["signal"] = o.signal;
  if (o.exit_code >= 0) j["exit_code"] = o.exit_code;
  if (o.forced) j["forced_kill"] = true;
  return j;
}

}  // namespace

launch::StartMethod start_method_of(const VariantSpec& variant) {
  auto m = launch::parse_start_method(variant.start_method);
  if (!m) throw std::invalid_argument("variant " + variant.name + " has no start method");
  return *m;
}

std::vector<launch::Worker> start_pool(const VariantSpec& variant, const std::string& worker,
                                       const std::vector<nlohmann::json>& payloads) {
  launch::Launcher launcher(start_method_of(variant));
  std::vector<launch::Worker> workers;
  workers.reserve(payloads.size());
  nlohmann::json started = nlohmann::json::array();
  for (const auto& p : payloads) {
    workers.push_back(launcher.start(worker, p));
    started.push_back(workers.back().pid());
  }
  // Known before any worker can hang: which processes were started, and how.
  channel::send_details({{"start_method", variant.start_method}, {"worker_pids", started}});
  return workers;
}

PoolResult join_pool(std::vector<launch::Worker>& workers, std::chrono::milliseconds deadline,
                     std::chrono::milliseconds grace) {
  PoolResult r;
  const auto until = Clock::now() + deadline;
  size_t hung = 0;
  for (size_t i = 0; i < workers.size(); ++i) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    auto o = workers[i].join(std::max(left, std::chrono::milliseconds(0)));
    nlohmann::json j;
    if (!o) {
      ++hung;
      auto t = workers[i].terminate(grace);
      j = worker_json(i, workers[i], t);
      j["status"] = "hang";
      j["error"] = "did not finish within the pool's deadline; terminated" +
                   std::string(t.forced ? " (SIGKILL after the grace period)" : "");
    } else {
      j = worker_json(i, workers[i], *o);
      if (o->status == launch::WorkerOutcome::Status::kCrash && r.outcome != Outcome::kHang) {
        if (r.outcome != Outcome::kCrash) r.message = "worker " + std::to_string(i) + " (pid " +
                                                      std::to_string(workers[i].pid()) + ") " +
                                                      describe(*o);
        r.outcome = Outcome::kCrash;
      } else if (o->status == launch::WorkerOutcome::Status::kError && r.outcome == Outcome::kOk) {
        r.outcome = Outcome::kError;
        r.message = o->error;
      }
    }
    r.workers.push_back(j);
  }
  if (hung > 0) {
    r.outcome = Outcome::kHang;
    r.message = std::to_string(hung) + " of " + std::to_string(workers.size()) +
                " workers did not finish within " + std::to_string(deadline.count()) + " ms";
  }
  if (r.outcome == Outcome::kOk)
    r.message = workers.size() == 1 ? std::string("the worker finished")
                                    : "all " + std::to_string(workers.size()) + " workers finished";
  return r;
}

CaseResult to_case_result(PoolResult pool, nlohmann::json details) {
  details["workers"] = std::move(pool.workers);
  return CaseResult{pool.outcome, std::move(pool.message), std::move(details)};
}

}  // namespace fc
