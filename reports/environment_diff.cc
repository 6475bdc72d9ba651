// diff_environment(): the facts of run.environment (harness/session/environment_probe.h: what a
// repro program loads, and what forkcheck measured of the machine) that can bear on a fork, each
// compared between two reports and linked to the changed cases whose hazard depends on it. The
// report's header and cases are read from the model; run.environment (from Report::document) and
// run.options as written, key by key: a key one report lacks is unknown, one it holds as null says
// "none" (cgroup_quota, the CUDA driver), and an environment that lists no variables is not one
// that has none set. The model keeps none of these distinctions.
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <set>
#include <sstream>

#include "reports/model/report_model.h"
#include "reports/report_diff.h"
#include "reports/report_view.h"
#include "reports/text.h"
#include "reports/ticket_environment.h"

namespace fc::reports {
namespace {

using nlohmann::json;

// The environment facts each case's hazard (or its fixes, or whether it runs at all) depends on,
// the likeliest first (docs/cases.md says why for each; `forkcheck list CASE` too). A difference
// in one of them "may explain" a change of that case: a link, never a proof. Topics:
//   openmp         the OpenMP runtime(s) loaded (libgomp's pool does not survive fork, LLVM's
//                  libomp's does), libtorch's OpenMP version
//   omp-threads    omp_get_max_threads: with one thread libgomp starts no team, nothing to lose
//   openmp-vars    OMP_*, GOMP_*, KMP_* variables (KMP_INIT_AT_FORK, OMP_NUM_THREADS, ...)
//   torch-threads  libtorch's intra/inter-op threads, MKL_* variables, its parallel info
//   cpus           CPUs online, in the affinity mask, the cgroup quota: the default team size
//   libtorch       its version, build, libraries; CUDA devices it sees are under cuda
//   cuda           the CUDA driver and devices
//   shm            /dev/shm's size (DataLoader and shared storages live there)
//   open-files     the open-files limit (descriptor passing holds one per storage)
//   kernel, os     the kernel (namespaces, signals, SCM_RIGHTS), the OS (macOS-only cases)
//   libc, compiler pthread mutexes at fork, __cxa_guard for function-local statics
//   start-methods  which start methods exist here (a variant of a missing one is skipped)
// Each case says which in its catalog entry (`environment_topics`, carried in the report); a
// report from before that field links its cases to every topic (any may explain it). Two more
// are linked by what changed, not by case: "timeout" (options.timeout_s) to a variant
// that hung or timed out on either side, "forkcheck" (its version) to a changed expectation.
// The user's own program (exec, watch): anything that bears on a fork may.
const std::vector<std::string> kProgramTopics = {
    "program",    "openmp",   "omp-threads", "openmp-vars", "torch-threads", "cuda",         "shm",
    "open-files", "libtorch", "cpus",        "kernel",      "libc",          "start-methods"};

struct Fact {
  std::string name, topic, value;
  bool multiline = false;  // compared line by line: libtorch's build settings, parallel info
};

std::string joined(const json& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ", ") + display(i);
  return s.empty() ? "none" : s;
}

// A command line as a person types it (no quoting: it is shown, never run).
std::string joined_words(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of("/\\");
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string variable_topic(const std::string& name) {
  for (const char* p : {"OMP_", "GOMP_", "KMP_"})
    if (name.rfind(p, 0) == 0) return "openmp-vars";
  return name.rfind("MKL_", 0) == 0 ? "torch-threads" : "";
}

std::string risk_topic(const std::string& id) {
  if (id.rfind("dev-shm", 0) == 0) return "shm";
  if (id == "open-files-low") return "open-files";
  if (id.rfind("threads-over", 0) == 0) return "omp-threads";
  if (id == "fork-with-cuda") return "cuda";
  if (id == "fork-with-openmp") return "openmp";
  return "";
}

// Every fact of `report` diff compares, in the order shown when none is linked. A fact the report
// lacks (an older 1.x, an environment that could not be collected) is absent: unknown.
std::vector<Fact> facts_of(const Report& report) {
  std::vector<Fact> f;
  auto add = [&f](const std::string& name, const std::string& topic, const json& v) {
    if (!v.is_null()) f.push_back({name, topic, v.is_array() ? joined(v) : display(v)});
  };
  auto add_said = [&f](const std::string& name, const std::string& topic, const std::string& v) {
    if (!v.empty()) f.push_back({name, topic, v});
  };
  add_said("forkcheck.version", "forkcheck", report.tool.version);
  add_said("command", "", report.run.command);
  // exec and watch: the user's command line, first of what may explain its change.
  for (const auto& c : report.cases)
    if (c.variants.size() == 1 && c.variants[0].role == "subject")
      add_said("program", "program", joined_words(c.command));
  const json& options = report.run.options;
  add("options.timeout_s", "timeout", member(options, "timeout_s"));
  // 0 is how exec, watch and attach write "no --hang-after": only the deadline ends a stall.
  const json hang_after = member(options, "hang_after_s");
  if (hang_after.is_number() && hang_after.get<double>() <= 0)
    add_said("options.hang_after_s", "timeout", "none");
  else
    add("options.hang_after_s", "timeout", hang_after);
  add("options.only", "", member(options, "only"));
  add("options.zygote", "", member(options, "zygote"));
  add("options.jobs", "", member(options, "jobs"));
  const json& env = member(member(report.document, "run"), "environment");
  if (!env.is_object() || env.contains("error")) return f;
  // Each fact by where it is in run.environment (environment_probe.h): null where a report
  // lacks it.
  const auto at = [&env](std::initializer_list<const char*> path) {
    const json* v = &env;
    for (const char* key : path) v = &member(*v, key);
    return *v;
  };
  // A key held as null says "none" (no cgroup quota, no CUDA driver); an absent one is unknown.
  const auto none_if_null = [](const json& parent, const char* key) {
    return parent.is_object() && parent.contains(key) && parent[key].is_null()
               ? json("none")
               : member(parent, key);
  };

  add("openmp_runtimes", "openmp", at({"openmp_runtimes"}));
  add("threads.omp_get_max_threads", "omp-threads", at({"threads", "omp_get_max_threads"}));
  for (const auto& lib : list(env, "libraries"))
    if (field(lib, "kind") == "openmp")
      add("openmp." + field(lib, "family") + ".max_threads", "omp-threads",
          member(lib, "max_threads"));
  add("threads.torch_intra_op", "torch-threads", at({"threads", "torch_intra_op"}));
  add("threads.torch_inter_op", "torch-threads", at({"threads", "torch_inter_op"}));
  add("threads.nproc", "cpus", at({"threads", "nproc"}));
  add("cpus.online", "cpus", at({"cpus", "online"}));
  add("cpus.affinity", "cpus", at({"cpus", "affinity"}));
  add("cpus.cgroup_quota", "cpus", none_if_null(at({"machine", "cpus"}), "cgroup_quota"));

  add("libtorch.version", "libtorch", at({"libtorch", "version"}));
  if (at({"libtorch"}).is_object()) {
    json libs = json::array();
    for (const auto& lib : list(env, "libraries"))
      if (field(lib, "kind") == "torch")
        libs.push_back(base_name(field(lib, "real_path", field(lib, "path"))));
    std::sort(libs.begin(), libs.end());
    if (!libs.empty()) add("libtorch.libraries", "libtorch", libs);
  }
  for (const char* k : {"has_openmp", "has_mkl", "has_mkldnn"})
    add(std::string("libtorch.") + k, "libtorch", at({"libtorch", k}));
  add("libtorch.openmp_version", "openmp", at({"libtorch", "openmp_version"}));
  add("libtorch.cuda_devices", "cuda", at({"libtorch", "cuda_devices"}));
  if (const json v = at({"libtorch", "parallel_info"}); v.is_string())
    f.push_back({"libtorch.parallel_info", "torch-threads", v.get<std::string>(), true});
  if (const json v = at({"libtorch", "config"}); v.is_string())
    f.push_back({"libtorch.config", "libtorch", v.get<std::string>(), true});
  // Which program told: without forkcheck-repro-torch there are no libtorch facts at all.
  if (const json by = at({"collected_by"}); by.is_object())
    add("environment.collected_by", "libtorch",
        base_name(field(by, "program")) +
            (by.contains("fallback") ? " (torch program failed)" : ""));
  add("blas", "", at({"blas"}));

  if (const json cuda = at({"cuda"}); cuda.is_object()) {
    const bool no_driver = cuda.contains("driver") && cuda["driver"].is_null();
    add("cuda.driver", "cuda", none_if_null(cuda, "driver"));
    add("cuda.driver_version", "cuda", member(cuda, "driver_version"));
    if (cuda.contains("devices")) {
      json names = json::array();
      for (const auto& d : list(cuda, "devices")) names.push_back(field(d, "name"));
      add("cuda.devices", "cuda", names);
    } else if (no_driver) {
      add("cuda.devices", "cuda", json("none"));
    }
  }
  add("start_methods", "start-methods", at({"start_methods"}));
  // The Python side: the program's own under exec, watch and matrix (its bootstrap's facts).
  add("python.version", "program", at({"python", "python", "version"}));
  add("python.executable", "program", at({"python", "python", "executable"}));
  add("python.torch", "libtorch", at({"python", "torch", "version"}));

  add("os.sysname", "os", at({"os", "sysname"}));
  add("os.machine", "os", at({"os", "machine"}));
  add("os.kernel", "kernel", at({"os", "kernel"}));
  add("os.name", "", at({"os", "name"}));
  if (const json libc = at({"libc"}); libc.is_object())
    add("libc", "libc", field(libc, "name") + " " + field(libc, "version"));
  add("compiler", "compiler", at({"compiler"}));

  if (const json size = at({"machine", "dev_shm", "size_bytes"}); size.is_number())
    add("dev_shm.size", "shm", format_bytes(size.get<double>()));
  add("open_files.soft", "open-files", at({"machine", "open_files", "soft"}));
  add("open_files.hard", "open-files", at({"machine", "open_files", "hard"}));
  add("ptrace_scope", "", at({"ptrace_scope", "value"}));

  // Variables: the fingerprint's and those forkcheck saw itself, merged (as machine_rows does).
  std::map<std::string, std::string> vars;
  for (const json& from : {at({"variables"}), at({"machine", "variables"})})
    if (from.is_object())
      for (const auto& [k, v] : from.items()) vars[k] = display(v);
  for (const auto& [k, v] : vars) f.push_back({"variables." + k, variable_topic(k), v});
  for (const auto& r : list(env, "risks"))
    f.push_back({"risk." + field(r, "id"), risk_topic(field(r, "id")), field(r, "note", "noted")});
  return f;
}

// What a side says of a fact it does not list: a variable it has not set, a risk it did not
// note; "" (unknown) when that side measured none of them at all.
std::string absent_value(const Report& report, const std::string& name) {
  const json& env = member(member(report.document, "run"), "environment");
  if (name.rfind("variables.", 0) == 0 && (member(env, "variables").is_object() ||
                                           member(member(env, "machine"), "variables").is_object()))
    return "unset";
  if (name.rfind("risk.", 0) == 0 && member(env, "risks").is_array()) return "none";
  return "";
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t b = line.find_first_not_of(" \t\r"), e = line.find_last_not_of(" \t\r");
    if (b != std::string::npos) lines.push_back(line.substr(b, e - b + 1));
  }
  return lines;
}

// Two multi-line texts as the first line of each that the other lacks ("" both: the same lines).
std::pair<std::string, std::string> first_differing_lines(const std::string& a,
                                                          const std::string& b) {
  const auto la = lines_of(a), lb = lines_of(b);
  const std::set<std::string> sa(la.begin(), la.end()), sb(lb.begin(), lb.end());
  std::string da, db;
  for (const auto& l : la)
    if (!sb.count(l)) {
      da = l;
      break;
    }
  for (const auto& l : lb)
    if (!sa.count(l)) {
      db = l;
      break;
    }
  if (da.empty() && db.empty()) return {};
  return {da.empty() ? "(no such line)" : da, db.empty() ? "(no such line)" : db};
}

// The topics a case's change may be explained by, likeliest first: its catalog entry's, in B's
// report or else A's; every topic for a report that predates them.
std::vector<std::string> case_topics(const Report& a, const Report& b, const std::string& id) {
  for (const Report* r : {&b, &a})
    if (const Case* c = find_case(*r, id); c && !c->environment_topics.empty())
      return c->environment_topics;
  return kProgramTopics;
}

// The topics a change is linked to, each with its rank in the case's list (0: likeliest).
std::map<std::string, size_t> topics_of(const CaseChange& c, const std::vector<std::string>& list) {
  std::map<std::string, size_t> topics;
  for (size_t i = 0; i < list.size(); ++i) topics.emplace(list[i], i);
  for (const auto& o : {c.a, c.b})
    if (o == "hang" || o == "timeout") topics["timeout"] = 0;
  if (!c.expected_a.empty() && !c.expected_b.empty() && c.expected_a != c.expected_b)
    topics["forkcheck"] = 0;
  return topics;
}

}  // namespace

std::vector<EnvDifference> diff_environment(const Report& a, const Report& b,
                                            const std::vector<CaseChange>& changes) {
  const auto fa = facts_of(a), fb = facts_of(b);
  std::map<std::string, const Fact*> by_name_b;
  for (const auto& f : fb) by_name_b[f.name] = &f;
  std::set<std::string> names_a;
  for (const auto& f : fa) names_a.insert(f.name);

  struct Found {
    EnvDifference d;
    std::string topic;
    size_t index;
  };
  std::vector<Found> found;
  auto consider = [&found](const Fact& f, std::string va, std::string vb) {
    if (va.empty() || vb.empty() || va == vb) return;  // unknown on a side, or the same
    if (f.multiline) {
      auto [da, db] = first_differing_lines(va, vb);
      if (da.empty()) return;
      va = da;
      vb = db;
    }
    found.push_back({{f.name, va, vb, {}}, f.topic, found.size()});
  };
  for (const auto& f : fa) {
    auto it = by_name_b.find(f.name);
    consider(f, f.value, it != by_name_b.end() ? it->second->value : absent_value(b, f.name));
  }
  for (const auto& f : fb)
    if (!names_a.count(f.name)) consider(f, absent_value(a, f.name), f.value);

  // Link each difference to the changes it may explain. Cases only in one report are not run
  // side by side: nothing there to explain. A case's verdict is named only when none of its
  // variants changed (its variants say more).
  // exec and watch: the one case is the user's program (its variant's role is subject).
  bool program = false;
  for (const auto& c : a.cases)
    for (const auto& v : c.variants)
      if (v.role == "subject") program = true;
  std::set<std::string> cases_with_variant_changes;
  for (const auto& c : changes)
    if (!c.variant.empty() && c.kind.rfind("only-in", 0) != 0)
      cases_with_variant_changes.insert(c.case_id);
  std::vector<size_t> best_rank(found.size(), SIZE_MAX);
  for (const auto& c : changes) {
    if (c.kind.rfind("only-in", 0) == 0 || c.case_id.empty()) continue;
    if (c.variant.empty() && cases_with_variant_changes.count(c.case_id)) continue;
    const std::string label = c.variant.empty() ? c.case_id : c.case_id + "/" + c.variant;
    const auto topics = topics_of(c, program ? kProgramTopics : case_topics(a, b, c.case_id));
    for (size_t i = 0; i < found.size(); ++i) {
      const auto t = topics.find(found[i].topic);
      if (found[i].topic.empty() || t == topics.end()) continue;
      auto& explains = found[i].d.may_explain;
      if (std::find(explains.begin(), explains.end(), label) == explains.end())
        explains.push_back(label);
      best_rank[i] = std::min(best_rank[i], t->second);
    }
  }
  // The likely cause first: linked before unlinked; then the more changes it may explain, the
  // higher its case ranks it, the earlier it comes.
  std::vector<size_t> order(found.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    const size_t nx = found[x].d.may_explain.size(), ny = found[y].d.may_explain.size();
    if ((nx == 0) != (ny == 0)) return nx != 0;
    if (nx != ny) return nx > ny;
    return best_rank[x] < best_rank[y];
  });
  std::vector<EnvDifference> out;
  for (size_t i : order) out.push_back(std::move(found[i].d));
  return out;
}

}  // namespace fc::reports
