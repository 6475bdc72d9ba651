// graceful-shutdown (source 000): at the end of each episode the A3C trainer stops its client
// processes: terminate(), join(timeout=3), and when one is still alive, "Warning: Process N did not
// terminate gracefully, forcing..." and kill(). The fixed behaviour is that escalation: workers
// that exit on SIGTERM do, one that ignores it is killed after a grace period, every process is
// reaped and nothing is left behind. Without a deadline (terminate(); join()) the parent waits
// forever for the one that ignores SIGTERM.
#include <chrono>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <forkcheck/launch.h>
#include "cases/support/termination.h"
#include "core/case_registry.h"
#include "core/channel.h"
#include "core/pool.h"
#include "launch/process.h"

namespace {
namespace graceful_shutdown {

using fc::Outcome;
using nlohmann::json;
namespace termination = fc::cases::termination;

constexpr std::chrono::milliseconds kGrace(500);  // the source waits 3 s
const std::vector<std::string> kRoles = {"polite", "stubborn", "polite"};

FORKCHECK_WORKER(shutdown_worker) {
  if (payload.at("role") == "stubborn") termination::ignore_and_wait_forever();
  termination::wait_for_termination_request();
  return {{"pid", fc::launch::current_process_id()}, {"stopped_by", "SIGTERM"}};
}

fc::CaseResult run(const fc::VariantSpec& variant) {
  std::vector<json> payloads;
  for (const auto& role : kRoles) payloads.push_back({{"role", role}});
  auto workers = fc::start_pool(variant, "shutdown_worker", payloads);
  const auto started = std::chrono::steady_clock::now();
  json details = {{"grace_ms", kGrace.count()}};
  // SIGTERM must find each worker ready: wait until the kernel shows its disposition.
  json roles = json::array();
  for (size_t i = 0; i < workers.size(); ++i) {
    const std::string want = kRoles[i] == "stubborn" ? "ignored" : "caught";
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    std::string seen;
    while ((seen = termination::sigterm_disposition(workers[i].pid())) != want &&
           std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    roles.push_back(
        {{"index", i}, {"pid", workers[i].pid()}, {"role", kRoles[i]}, {"sigterm", seen}});
    if (seen != want)
      return {Outcome::kError,
              "worker " + std::to_string(i) + " never set up its SIGTERM handling",
              {{"workers", roles}}};
  }
  details["roles"] = roles;

  if (variant.name == "fork-join-no-deadline") {  // terminate(); join() -- as without the fix
    fc::channel::send_details(details);
    fc::channel::step_begin("terminate each worker, then join it with no deadline");
    json ends = json::array();
    std::string how;
    for (size_t i = 0; i < workers.size(); ++i) {
      const auto o = workers[i].terminate(std::chrono::hours(24));
      ends.push_back(fc::worker_end_json(
          i, workers[i], o,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()));
      how += std::string(how.empty() ? "" : "; ") + "worker " + std::to_string(i) + " (" +
             kRoles[i] + ", pid " + std::to_string(workers[i].pid()) + ") " +
             (o.forced ? "was killed" : "ended: " + fc::describe_end(o));
    }
    fc::channel::step_end("terminate each worker, then join it with no deadline");
    // Only reached if every join returned: say how each worker ended, whatever that was.
    details["ends"] = ends;
    return {Outcome::kOk, "every join returned: " + how, details};
  }

  // The source's shutdown: terminate, join with a deadline, kill what is still alive.
  json forced = json::array(), warnings = json::array(), ends = json::array();
  std::string problems;
  for (size_t i = 0; i < workers.size(); ++i) {
    const fc::launch::ProcessId pid = workers[i].pid();
    const auto o = workers[i].terminate(kGrace);
    if (o.forced) {
      const std::string warning =
          "Warning: Process " + std::to_string(pid) + " did not terminate gracefully, forcing...";
      std::cout << warning << std::endl;
      warnings.push_back(warning);
      forced.push_back(pid);
    }
    json end = fc::worker_end_json(
        i, workers[i], o,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    end["role"] = kRoles[i];
    end["forced"] = o.forced;
    ends.push_back(end);
    const bool as_expected = kRoles[i] == "stubborn"
                                 ? o.forced && o.signal == termination::kill_signal()
                                 : !o.forced && o.status == fc::launch::WorkerOutcome::Status::kOk;
    if (!as_expected)
      problems += "; worker " + std::to_string(i) + " (" + kRoles[i] + ") ended " + end.dump();
  }
  // Nothing left behind: every worker's pid is gone from the process table (a zombie would
  // still be there).
  json left = json::array();
  for (const auto& w : workers)
    if (std::string state = termination::process_state(w.pid()); !state.empty())
      left.push_back({{"pid", w.pid()}, {"state", state}});
  details.update(
      {{"ends", ends}, {"forced", forced}, {"warnings", warnings}, {"left_behind", left}});
  if (!left.empty())
    problems += std::string("; still in ") + termination::process_table() + ": " + left.dump();
  if (!problems.empty()) return {Outcome::kError, problems.substr(2), details};
  return {Outcome::kOk,
          "terminated " + std::to_string(workers.size()) +
              " workers: " + std::to_string(workers.size() - forced.size()) +
              " exited cleanly on SIGTERM, " + std::to_string(forced.size()) +
              " ignored it and was killed after " + std::to_string(kGrace.count()) + " ms (pid " +
              forced[0].dump() + "); no worker pid left in " + termination::process_table(),
          details};
}

std::vector<fc::VariantSpec> variants() {
  const char* escalation =
      "terminate, join with a deadline, then kill: the one that ignores "
      "SIGTERM is killed after the grace period and every worker is reaped";
  const char* what = "2 workers exit on SIGTERM, 1 ignores it; terminate each, join 0.5 s, kill";
  // The fixed variants let the stubborn worker's grace period pass.
  const double grace_s = std::chrono::duration<double>(kGrace).count();
  std::vector<fc::VariantSpec> v = {
      fc::fix("fork", "fork", escalation, what).waits(grace_s),
      fc::fix("spawn", "spawn", escalation, what).waits(grace_s),
      fc::fix("forkserver", "forkserver", escalation, what).waits(grace_s),
      fc::hazard("fork-join-no-deadline", "fork", Outcome::kHang,
                 "SIGTERM is ignored by one worker, and join() without a timeout waits for it "
                 "forever (the parent blocks using no CPU)",
                 "as `fork`, but terminate(); join() with no deadline and no kill"),
  };
  return fc::skip_all(std::move(v), termination::unavailable_reason());
}

FORKCHECK_CASE(graceful_shutdown_case) {
  fc::CaseDef c;
  c.id = "graceful-shutdown";
  c.title = "Stopping workers: terminate, join with a deadline, kill what ignores SIGTERM";
  c.source_title = "PyTorchのマルチプロセス学習でハマったところ";
  c.source_author = "M・W (Mynavi AI戦略室)";
  c.source_doc = "000";
  c.reported =
      "After each episode: `if p.is_alive(): p.terminate()`, `p.join(timeout=3)`, and if still "
      "alive `print(f\"Warning: Process {p.pid} did not terminate gracefully, forcing...\")`, "
      "`p.kill()`, `p.join()`.";
  c.mechanism =
      "terminate() only sends SIGTERM, which a process may ignore or handle slowly; join() "
      "without a timeout then waits forever. SIGKILL cannot be ignored, and join() after it "
      "reaps the process (waitpid), so no zombie remains.";
  c.platforms = "POSIX (signals); Windows has no SIGTERM to ignore";
  c.variants = &variants;
  c.run = &run;
  // What in the environment may explain a change of its outcome (forkcheck diff).
  c.environment_topics = {"os", "kernel", "cpus", "start-methods"};
  c.shows_as = {"stuck:pause"};
  return c;
}

}  // namespace graceful_shutdown
}  // namespace
