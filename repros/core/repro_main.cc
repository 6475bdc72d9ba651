// main() of the repro programs: `--list` prints the catalog this program holds; `--run CASE
// --variant NAME` runs one variant and sends its result on the harness's channel; `--env` sends
// the environment fingerprint of this program (what it loads, see core/environment.h); `--zygote`
// serves those same commands in forked copies of itself (core/zygote_server.h); `--start-state`
// prints what this process started with (core/start_state.h: descriptors, signal mask and
// dispositions), for the tests of the zygote. A spawned worker never gets past launch::init().

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <forkcheck/launch.h>
#include "core/bench.h"
#include "core/case_registry.h"
#include "core/channel.h"
#include "core/end_process.h"
#include "core/environment.h"
#include "core/start_state.h"
#include "core/startup_cost.h"
#include "core/zygote_server.h"
#include "launch/process.h"

namespace {

int usage(const char* argv0, const std::string& why) {
  std::cerr << argv0 << ": " << why << " (usage: " << argv0
            << " --list | --env | --start-state | --run CASE --variant NAME [--start-method M])\n";
  return 2;
}

// For the test that pins the order of start-up: FORKCHECK_REPRO_TRACE=1 names each step on stderr.
void trace(const char* what) {
  static const bool on = [] {
    const char* t = std::getenv("FORKCHECK_REPRO_TRACE");
    return t != nullptr && std::strcmp(t, "1") == 0;
  }();
  if (on) std::cerr << "forkcheck-repro: " << what << std::endl;
}

std::string self_path(const char* argv0) {
  std::string p = fc::launch::self_executable_path();
  return p.empty() ? argv0 : p;
}

// One command line (without the program name): what main() runs, in this process or in a copy
// forked by the zygote.
int command(const char* argv0, const std::vector<std::string>& args) {
  const int argc = static_cast<int>(args.size()) + 1;
  auto arg = [&](int i) { return args[static_cast<size_t>(i - 1)]; };
  std::string case_id, variant_name, native_program, start_method;
  bool list = false, env = false, bench = false, start_state = false;
  int repeat = 10;
  for (int i = 1; i < argc; ++i) {
    std::string a = arg(i);
    if (a == "--list") {
      list = true;
    } else if (a == "--env") {
      env = true;
    } else if (a == "--bench") {
      bench = true;
    } else if (a == "--start-state") {
      start_state = true;
    } else if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(arg(++i).c_str()));
    } else if (a == "--start-method" && i + 1 < argc) {
      start_method = arg(++i);
    } else if (a == "--native-program" && i + 1 < argc) {
      native_program = arg(++i);
    } else if ((a == "--run" || a == "--variant") && i + 1 < argc) {
      (a == "--run" ? case_id : variant_name) = arg(++i);
    } else {
      return usage(argv0, "unknown argument '" + a + "'");
    }
  }
  if (list) {
    std::cout << fc::catalog_json(self_path(argv0)).dump(2) << std::endl;
    return 0;
  }
  if (start_state) {  // for the tests: what this process started with
    std::cout << fc::start_state().dump() << std::endl;
    return 0;
  }
  if (env) {
    auto e = fc::collect_environment(self_path(argv0));
    if (fc::channel::connected())
      fc::channel::send_result({{"environment", e}});
    else
      std::cout << e.dump(2) << std::endl;
    return 0;
  }
  if (bench) {
    // While this process has one thread, as a user's would; where there is no forkserver the
    // bench leaves that method out (and says so).
    if (fc::launch::unavailable_reason(fc::launch::StartMethod::kForkserver) == nullptr)
      fc::launch::start_forkserver();
    if (native_program.empty()) native_program = self_path(argv0);
    auto b = fc::bench::run(repeat, native_program);
    if (fc::channel::connected())
      fc::channel::send_result({{"bench", b}});
    else
      std::cout << b.dump(2) << std::endl;
    return 0;
  }
  if (case_id.empty() || variant_name.empty()) return usage(argv0, "nothing to do");

  const fc::CaseDef* c = fc::find_case(case_id);
  if (!c) return usage(argv0, "unknown case '" + case_id + "'");
  // The forkserver is forked first, while this process has one thread and nothing in it has
  // touched a device: a case's variants() may probe one (cuda-before-fork calls cuInit), and its
  // run() sets up OpenMP, autograd, a configured global. The harness says which method the
  // variant uses (--start-method) so that this can happen before the variants are computed.
  const bool server_first = start_method == "forkserver";
  if (server_first) trace("forkserver started"), fc::launch::start_forkserver();
  fc::VariantSpec variant;
  bool found = false;
  trace("variants computed");
  for (auto& v : c->variants())
    if (v.name == variant_name) variant = v, found = true;
  if (!found) return usage(argv0, "case " + case_id + " has no variant '" + variant_name + "'");
  if (!start_method.empty() && start_method != variant.start_method)
    return usage(argv0, "variant " + variant_name + " of " + case_id + " starts its workers with " +
                            variant.start_method + ", not " + start_method);
  // Run by hand without --start-method: start it as early as is still possible.
  if (!server_first && variant.start_method == "forkserver") fc::launch::start_forkserver();

  // The machine's defaults as this process starts, then what was in force when the case ended.
  const nlohmann::json threads_at_start = fc::thread_counts();
  // Sent now as well: a variant that hangs sends no result.
  if (fc::channel::connected())
    fc::channel::send_details({{"threads", {{"default", threads_at_start}}}});
  fc::CaseResult r;
  try {
    r = c->run(variant);
  } catch (const std::exception& e) {
    r.outcome = fc::Outcome::kError;
    r.message = std::string("the case itself failed: ") + e.what();
    r.details["case_failure"] = true;
  }
  if (!r.details.is_object()) r.details = {{"case_details", r.details}};
  r.details["threads"] = {{"default", threads_at_start}, {"at_end", fc::thread_counts()}};
  fc::channel::send_result(
      {{"outcome", fc::to_string(r.outcome)}, {"message", r.message}, {"details", r.details}});
  std::cout.flush();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  fc::note_startup_cost();       // before anything else: what loading this program cost
  fc::launch::init(argc, argv);  // a spawned worker runs here and exits
  if (argc == 2 && std::strcmp(argv[1], "--zygote") == 0) {
    return fc::serve_zygote(
        argv[0], [&](const std::vector<std::string>& args) { return command(argv[0], args); });
  }
  fc::end_process(command(argv[0], std::vector<std::string>(argv + 1, argv + argc)));
}
