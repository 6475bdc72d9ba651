#include "core/pool.h"

#include "core/channel.h"
#include "core/quantity_text.h"

#include "launch/process.h"
#include "launch/process_tree.h"
#include "launch/tree_activity.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <stdexcept>

namespace fc {
namespace {

using Clock = std::chrono::steady_clock;

std::string signal_name(int sig) { return "SIG" + launch::signal_abbrev(sig); }

// "worker 1 (pid 4242, fork)"
std::string who(size_t index, const launch::Worker& w) {
  return "worker " + std::to_string(index) + " (pid " + std::to_string(w.pid()) + ", " +
         launch::to_string(w.method()) + ")";
}

}  // namespace

// `ended_after_s`: when its end was seen, in seconds after the pool started (its first worker's
// start()).
std::string describe_end(const launch::WorkerOutcome& o) {
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

nlohmann::json worker_end_json(size_t index, const launch::Worker& w,
                               const launch::WorkerOutcome& o, double ended_after_s) {
  nlohmann::json j = {{"index", index},
                      {"pid", w.pid()},
                      {"start_method", launch::to_string(w.method())},
                      {"status", launch::to_string(o.status)},
                      {"seconds", o.seconds},
                      {"ended_after_s", ended_after_s}};
  if (o.status == launch::WorkerOutcome::Status::kOk) j["result"] = o.result;
  if (o.status != launch::WorkerOutcome::Status::kOk) j["error"] = describe_end(o);
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

// One worker's tree, looked at every TreeActivity::kLookEvery while it runs: the worker and
// every process it started, so that a worker waiting on a child that computes counts as working.
struct TreeWatch {
  launch::TreeActivity activity;
  launch::TreeLook last;

  void look(launch::ProcessId pid) {
    launch::TreeLook now = launch::look_at_tree({pid});
    if (!activity.started()) {
      activity.start(now.at);
    } else {
      const launch::TreeChange change = launch::compare_looks(last, now);
      activity.look(now.at, change);
    }
    last = std::move(now);
  }

  // The facts the report shows, with the names the harness gives a variant's tree.
  nlohmann::json facts() const {
    auto s = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
    return {{"state", activity.blocked() ? "blocked" : "working"},
            {"still_s", s(activity.still_for())},
            {"window_s", s(activity.window())},
            {"cpu_s_in_window", static_cast<double>(activity.cpu_in_window_ns()) / 1e9},
            {"cpu_s", static_cast<double>(activity.cpu_total_ns()) / 1e9},
            {"processes", last.processes.size()},
            {"threads", last.thread_count()},
            {"longest_still_s", s(activity.longest_still())},
            {"looks", activity.looks()}};
  }

  // "blocked for 18.8 s (0 ms of CPU in the last 1.0 s; 1 process, 1 thread)"
  std::string text() const {
    const double window = std::chrono::duration<double>(activity.window()).count();
    std::string t =
        activity.blocked()
            ? "blocked for " +
                  format_tenths(std::chrono::duration<double>(activity.still_for()).count())
            : std::string("still working");
    return t + " (" + format_cpu(static_cast<double>(activity.cpu_in_window_ns()) / 1e9) +
           " of CPU in the last " + format_tenths(window) + "; " +
           counted(last.processes.size(), "process", "processes") + ", " +
           counted(last.thread_count(), "thread", "threads") + ")";
  }
};

// One worker's end as join_pool saw it.
struct Seen {
  launch::WorkerOutcome outcome;
  Clock::time_point at;  // when join_pool saw it end (within milliseconds of the end itself)
  // Still running at the pool's deadline, then terminated: what its tree was doing then.
  std::optional<TreeWatch> unfinished;
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
  std::vector<TreeWatch> trees(n);
  std::vector<size_t> order;  // indices, in the order their ends were seen
  auto take = [&](size_t i, launch::WorkerOutcome o) {
    seen[i] = Seen{std::move(o), Clock::now(), std::nullopt};
    order.push_back(i);
  };
  auto running = [&] {
    std::vector<size_t> r;
    for (size_t i = 0; i < n; ++i)
      if (!seen[i]) r.push_back(i);
    return r;
  };
  // Every worker is watched at once: one that dies while another still runs is seen then, not
  // after every worker started before it has ended (which is what "which worker died, and when"
  // needs, and what makes the first failure the first in time). One wait over all of them, that
  // returns when a worker ends or it is time to look at the trees: no polling, so the parent
  // itself stays still while its workers are blocked (it is part of what the harness watches).
  auto wait = [&](const std::vector<size_t>& pending, Clock::time_point wake) {
    std::vector<launch::Worker*> ws;
    for (size_t i : pending) ws.push_back(&workers[i]);
    const auto left = std::max(Clock::duration::zero(), wake - Clock::now());
    for (size_t k : launch::join_any(ws, std::chrono::ceil<std::chrono::milliseconds>(left)))
      take(pending[k], workers[pending[k]].join(std::chrono::milliseconds(0)).value());
  };
  for (size_t i = 0; i < n; ++i) trees[i].look(workers[i].pid());
  auto next_look = Clock::now() + launch::TreeActivity::kLookEvery;
  for (auto pending = running(); !pending.empty(); pending = running()) {
    const auto now = Clock::now();
    if (now >= until) break;
    if (now >= next_look) {
      for (size_t i : pending) trees[i].look(workers[i].pid());
      next_look = now + launch::TreeActivity::kLookEvery;
    }
    wait(pending, std::min(next_look, until));
  }

  // At the deadline: what ended by now ended by itself; the rest are judged on one last look at
  // their trees (hang when blocked, timeout when working), then terminated.
  if (auto pending = running(); !pending.empty()) wait(pending, Clock::now());
  const auto unfinished = running();
  for (size_t i : unfinished) trees[i].look(workers[i].pid());
  for (size_t i : unfinished) {
    take(i, workers[i].terminate(grace));
    seen[i]->unfinished = std::move(trees[i]);
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
  size_t blocked = 0, working = 0;
  std::string unfinished_text;  // "worker 0 (pid 4242, fork) blocked for 18.8 s (...); ..."
  constexpr size_t kNamedAtMost = 4;
  for (size_t i = 0; i < n; ++i) {
    const Seen& s = *seen[i];
    nlohmann::json j = worker_end_json(i, workers[i], s.outcome, after_start(i));
    if (s.unfinished) {
      const bool is_blocked = s.unfinished->activity.blocked();
      if (is_blocked)
        ++blocked;
      else
        ++working;
      j["status"] = is_blocked ? "hang" : "timeout";
      j["tree"] = s.unfinished->facts();
      j["error"] = s.unfinished->text() + " at the pool's deadline; terminated" +
                   std::string(s.outcome.forced ? " (SIGKILL after the grace period)" : "");
      if (blocked + working <= kNamedAtMost)
        unfinished_text += "; " + who(i, workers[i]) + " " + s.unfinished->text();
    }
    r.workers.push_back(j);
  }
  if (unfinished.size() > kNamedAtMost)
    unfinished_text += "; and " + std::to_string(unfinished.size() - kNamedAtMost) + " more";
  // The pool's outcome, the most telling first:
  //   crash    a worker was killed by a signal (the first to be, in time);
  //   error    a worker threw or exited badly (the first to, in time);
  //   hang     workers still running at the deadline, every one's tree blocked;
  //   timeout  the same, but at least one tree still working (not a hang: it may only be slow).
  // An end that happened outranks a deadline that passed: the deadline says only that some
  // workers had not ended yet, and what ended is often why (the others wait for a lock the dead
  // one held, a queue it no longer feeds). The message still counts the unfinished ones.
  for (size_t i : order) {
    const Seen& s = *seen[i];
    if (s.unfinished) continue;
    if (s.outcome.status == launch::WorkerOutcome::Status::kCrash && r.outcome != Outcome::kCrash) {
      r.outcome = Outcome::kCrash;
      r.message = who(i, workers[i]) + " " + describe_end(s.outcome) + ", " +
                  format_seconds(after_start(i)) + " after the pool started";
    } else if (s.outcome.status == launch::WorkerOutcome::Status::kError &&
               r.outcome == Outcome::kOk) {
      r.outcome = Outcome::kError;
      r.message = s.outcome.error;
    }
  }
  if (!unfinished.empty()) {
    const std::string left = std::to_string(unfinished.size()) + " of " +
                             counted(n, "worker", "workers") +
                             " had not ended at the pool's deadline (" +
                             format_tenths(std::chrono::duration<double>(deadline).count()) +
                             "): " + std::to_string(blocked) + " blocked, " +
                             std::to_string(working) + " still working" + unfinished_text;
    if (r.outcome == Outcome::kOk) {
      r.outcome = working > 0 ? Outcome::kTimeout : Outcome::kHang;
      r.message = left;
    } else {
      r.message += "; and " + left;
    }
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
