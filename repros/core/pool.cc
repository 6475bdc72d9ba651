#include "core/pool.h"

#include "core/channel.h"

#include "launch/process.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <stdexcept>

namespace fc {
namespace {

using Clock = std::chrono::steady_clock;

// How long join_pool blocks on one worker before looking at the others again: a worker's end is
// seen within about this long of happening, whichever worker it is.
constexpr std::chrono::milliseconds kJoinSlice(10);

std::string signal_name(int sig) { return "SIG" + launch::signal_abbrev(sig); }

std::string describe(const launch::WorkerOutcome& o) {
  switch (o.status) {
    case launch::WorkerOutcome::Status::kOk:
      return "finished";
    case launch::WorkerOutcome::Status::kError:
      return o.error;
    case launch::WorkerOutcome::Status::kCrash:
      return "killed by " + signal_name(o.signal) + " (" + launch::signal_description(o.signal) +
             ")" + (o.core_dumped ? ", core dumped" : "");
  }
  return "?";
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", s);
  return buf;
}

// "worker 1 (pid 4242, fork)"
std::string who(size_t index, const launch::Worker& w) {
  return "worker " + std::to_string(index) + " (pid " + std::to_string(w.pid()) + ", " +
         launch::to_string(w.method()) + ")";
}

}  // namespace

// `ended_after_s`: when its end was seen, in seconds after the pool started (its first worker's
// start()).
nlohmann::json worker_end_json(size_t index, const launch::Worker& w,
                               const launch::WorkerOutcome& o, double ended_after_s) {
  nlohmann::json j = {{"index", index},
                      {"pid", w.pid()},
                      {"start_method", launch::to_string(w.method())},
                      {"status", launch::to_string(o.status)},
                      {"seconds", o.seconds},
                      {"ended_after_s", ended_after_s}};
  if (o.status == launch::WorkerOutcome::Status::kOk) j["result"] = o.result;
  if (o.status != launch::WorkerOutcome::Status::kOk) j["error"] = describe(o);
  if (o.signal != 0) {
    j["signal"] = o.signal;
    j["signal_name"] = signal_name(o.signal);
    j["core_dumped"] = o.core_dumped;
  }
  if (o.exit_code >= 0) j["exit_code"] = o.exit_code;
  if (o.forced) j["forced_kill"] = true;
  return j;
}

namespace {

// One worker's end as join_pool saw it.
struct Seen {
  launch::WorkerOutcome outcome;
  Clock::time_point at;  // when join_pool saw it end (within kJoinSlice of the end itself)
  bool hung = false;     // still running at the pool's deadline, then terminated
};

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
  const auto until = Clock::now() + deadline;
  const size_t n = workers.size();
  std::vector<std::optional<Seen>> seen(n);
  std::vector<size_t> order;  // indices, in the order their ends were seen
  auto take = [&](size_t i, launch::WorkerOutcome o) {
    seen[i] = Seen{std::move(o), Clock::now(), false};
    order.push_back(i);
  };
  // Every worker is watched at once: one that dies while another still runs is seen then, not
  // after every worker started before it has ended (which is what "which worker died, and when"
  // needs, and what makes the first failure the first in time).
  for (size_t pending = n; pending > 0;) {
    size_t first = n;
    for (size_t i = 0; i < n; ++i) {
      if (seen[i]) continue;
      if (auto o = workers[i].join(std::chrono::milliseconds(0))) {
        take(i, std::move(*o));
        --pending;
      } else if (first == n) {
        first = i;
      }
    }
    if (pending == 0) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    if (left <= std::chrono::milliseconds(0)) break;
    if (auto o = workers[first].join(std::min(left, kJoinSlice))) {
      take(first, std::move(*o));
      --pending;
    }
  }
  size_t hung = 0;
  for (size_t i = 0; i < n; ++i) {
    if (seen[i]) continue;
    ++hung;
    take(i, workers[i].terminate(grace));
    seen[i]->hung = true;
  }

  // The pool started when its first worker did: each worker's start is when its end was seen
  // less how long it ran (WorkerOutcome::seconds runs from its start() to that end).
  Clock::time_point pool_start = Clock::now();
  for (const auto& s : seen)
    pool_start =
        std::min(pool_start, s->at - std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(s->outcome.seconds)));
  auto after_start = [&](size_t i) {
    return std::chrono::duration<double>(seen[i]->at - pool_start).count();
  };

  PoolResult r;
  for (size_t i = 0; i < n; ++i) {
    const Seen& s = *seen[i];
    nlohmann::json j = worker_end_json(i, workers[i], s.outcome, after_start(i));
    if (s.hung) {
      j["status"] = "hang";
      j["error"] = "did not finish within the pool's deadline; terminated" +
                   std::string(s.outcome.forced ? " (SIGKILL after the grace period)" : "");
    }
    r.workers.push_back(j);
  }
  // The first failure in time: a crash before any error, as before.
  for (size_t i : order) {
    const Seen& s = *seen[i];
    if (s.hung) continue;
    if (s.outcome.status == launch::WorkerOutcome::Status::kCrash && r.outcome != Outcome::kCrash) {
      r.outcome = Outcome::kCrash;
      r.message = who(i, workers[i]) + " " + describe(s.outcome) + ", " +
                  seconds_text(after_start(i)) + " after the pool started";
    } else if (s.outcome.status == launch::WorkerOutcome::Status::kError &&
               r.outcome == Outcome::kOk) {
      r.outcome = Outcome::kError;
      r.message = s.outcome.error;
    }
  }
  if (hung > 0) {
    r.outcome = Outcome::kHang;
    r.message = std::to_string(hung) + " of " + std::to_string(n) +
                " workers did not finish within " + std::to_string(deadline.count()) + " ms";
  }
  if (r.outcome == Outcome::kOk)
    r.message = n == 1 ? std::string("the worker finished")
                       : "all " + std::to_string(n) + " workers finished";
  return r;
}

CaseResult to_case_result(PoolResult pool, nlohmann::json details) {
  details["workers"] = std::move(pool.workers);
  return CaseResult{pool.outcome, std::move(pool.message), std::move(details)};
}

}  // namespace fc
