#include "harness/watch/fork_hazards.h"

#include <algorithm>
#include <map>
#include <set>

#include "harness/watch/main_guard.h"
#include "reports/fork_hazard_text.h"

namespace fc::harness {
namespace {

using json = nlohmann::json;

// The thread-pool runtimes, recognised by the library that started a thread. Their hazards' words
// are reports/fork_hazard_text.h's.
struct Runtime {
  const char* prefix;  // of the library's file name
  const char* name;    // as the report names it
  bool stops_at_fork;  // its own fork handler stops the pool: not a hazard
};

const Runtime kRuntimes[] = {
    {"libgomp", "libgomp", false},     {"libomp", "libomp", false}, {"libiomp", "libiomp5", false},
    {"libmkl", "MKL", false},          {"libblis", "BLIS", false},  {"libtbb", "TBB", false},
    {"libopenblas", "OpenBLAS", true},
};

const Runtime* runtime_of(const std::string& library) {
  for (const auto& r : kRuntimes)
    if (library.rfind(r.prefix, 0) == 0) return &r;
  return nullptr;
}

}  // namespace

json fork_hazards(const json& fork) {
  json hazards = json::array();
  if (fork.value("exec", false)) return hazards;

  const int64_t self = fork["thread"].value("tid", int64_t{0});
  std::map<const Runtime*, size_t> pools;  // workers per runtime
  std::vector<std::string> others;         // the other threads, "name (by library)"
  for (const auto& t : fork.value("thread_list", json::array())) {
    if (t.value("tid", int64_t{0}) == self) continue;
    const std::string by = t.value("by", "");
    if (const Runtime* r = runtime_of(by)) {
      ++pools[r];
      continue;
    }
    // A Python thread by its Python name and where it was started (watch/python_forks.h).
    if (t.contains("python_name") && t["python_name"].is_string()) {
      const std::string at = t.value("started_at", "");
      others.push_back("\"" + t["python_name"].get<std::string>() + "\"" +
                       (at.empty() ? "" : " (started at " + at + ")"));
      continue;
    }
    std::string name = t.value("name", "");
    others.push_back(name + (by.empty() ? "" : " (started by " + by + ")"));
  }
  // Threads beyond the listed ones (the shim lists 64) are others of unknown origin.
  const size_t alive = fork.value("threads", size_t{0});
  const size_t listed = fork.value("thread_list", json::array()).size();
  const size_t unlisted = alive > listed ? alive - listed : 0;

  for (const auto& [r, n] : pools) {
    if (r->stops_at_fork) continue;
    json hazard = {{"kind", "thread-pool"}, {"runtime", r->name}, {"threads", n}};
    hazard.update(reports::thread_pool_hazard_words(r->name, n));
    hazards.push_back(std::move(hazard));
  }
  const size_t other_count = others.size() + unlisted;
  if (other_count > 0) {
    std::string names;
    for (size_t i = 0; i < others.size() && i < 8; ++i) names += (i ? ", " : "") + others[i];
    if (other_count > 8) names += ", ...";
    // Where it forked, in Python, when the bootstrap said: "train.py:34 in main: w.start()".
    const std::string site = fork.contains("python") && fork["python"].is_object()
                                 ? fork["python"].value("site", "")
                                 : "";
    json hazard = {{"kind", "threads"}, {"threads", other_count}};
    hazard.update(reports::threads_hazard_words(other_count, names, site));
    hazards.push_back(std::move(hazard));
  }
  const json cuda = fork.value("cuda", json::object());
  if (cuda.value("initialised", false)) {
    json hazard = {{"kind", "cuda"}, {"runtime", "CUDA"}};
    hazard.update(reports::cuda_hazard_words(cuda.value("devices", size_t{0})));
    hazards.push_back(std::move(hazard));
  }
  return hazards;
}

void add_hazards(json& forks) {
  for (auto& f : forks) {
    f["hazards"] = fork_hazards(f);
    json notes = json::array();
    std::map<const Runtime*, size_t> excused;
    for (const auto& t : f.value("thread_list", json::array()))
      if (const Runtime* r = runtime_of(t.value("by", "")); r && r->stops_at_fork) ++excused[r];
    for (const auto& [r, n] : excused) notes.push_back(reports::pool_not_counted_note(r->name, n));
    if (f["cuda"].value("loaded", false) && !f["cuda"].value("initialised", false))
      notes.push_back(reports::cuda_loaded_note());
    if (!notes.empty()) f["notes"] = notes;
  }
}

json python_stack_of(const json& fork) {
  const auto p = fork.find("python");
  if (p == fork.end() || !p->is_object()) return nullptr;
  const auto s = p->find("stack");
  return s != p->end() && s->is_array() ? *s : json();
}

std::vector<std::string> fork_advice(const json& hazards, const json& python_stack) {
  std::vector<std::string> out;
  if (hazards.empty()) return out;
  const StartSite site = start_site(python_stack);
  std::string unguarded_at;
  if (site.guard == StartSite::Guard::kUnguarded) {
    const auto slash = site.file.find_last_of('/');
    unguarded_at = (slash == std::string::npos ? site.file : site.file.substr(slash + 1)) + ":" +
                   std::to_string(site.line);
  }
  out.push_back(reports::start_worker_otherwise(unguarded_at));
  std::set<std::string> seen;
  for (const auto& h : hazards) {
    const std::string s = h.value("instead", "");
    if (!s.empty() && seen.insert(s).second) out.push_back(s);
  }
  return out;
}

const std::vector<std::string>& hazard_kinds() {
  static const std::vector<std::string> kinds = {"thread-pool", "threads", "cuda"};
  return kinds;
}

bool is_hazard_kind(const std::string& kind) {
  const auto& k = hazard_kinds();
  return std::find(k.begin(), k.end(), kind) != k.end();
}

void judge_forks(json& forks, const std::vector<std::string>& allowed) {
  const std::set<std::string> allow(allowed.begin(), allowed.end());
  for (auto& f : forks) {
    if (!f.contains("hazards") || f["hazards"].empty()) continue;
    bool all_allowed = true;
    for (auto& h : f["hazards"]) {
      const bool ok = allow.count(h.value("kind", "")) > 0;
      if (ok) h["allowed"] = true;
      all_allowed = all_allowed && ok;
    }
    f["allowed"] = all_allowed;
    f["advice"] = fork_advice(f["hazards"], python_stack_of(f));
  }
}

json fork_totals(const json& forks) {
  size_t hazardous = 0, allowed = 0, exec = 0;
  std::set<std::string> runtimes;
  for (const auto& f : forks) {
    if (f.value("exec", false)) ++exec;
    const auto& h = f.value("hazards", json::array());
    if (!h.empty()) ++hazardous;
    if (!h.empty() && f.value("allowed", false)) ++allowed;
    for (const auto& x : h)
      if (x.contains("runtime")) runtimes.insert(x["runtime"].get<std::string>());
  }
  return {
      {"forks", forks.size()}, {"hazardous", hazardous},           {"failing", hazardous - allowed},
      {"allowed", allowed},    {"safe", forks.size() - hazardous}, {"exec", exec},
      {"runtimes", runtimes}};
}

json hazard_findings(const json& forks) {
  constexpr size_t kIndicesPerFinding = 20;
  std::map<std::string, size_t> at;  // "kind runtime" -> its place in `all`
  json all = json::array();
  for (const auto& f : forks) {
    for (const auto& h : f.value("hazards", json::array())) {
      const std::string kind = h.value("kind", "");
      const std::string runtime = h.value("runtime", "");
      const std::string key = kind + " " + runtime;
      auto it = at.find(key);
      if (it == at.end()) {
        json finding = {
            {"kind", kind},
            {"title", kind + (runtime.empty() || kind == "cuda" ? "" : " (" + runtime + ")")},
            {"allowed", h.value("allowed", false)},
            {"forks", 0},
            {"fork_indices", json::array()},
            {"what", h.value("what", "")},
            {"why", h.value("why", "")},
            {"fix", fork_advice(json::array({h}))}};
        if (!runtime.empty()) finding["runtime"] = runtime;
        it = at.emplace(key, all.size()).first;
        all.push_back(std::move(finding));
      }
      json& finding = all[it->second];
      finding["forks"] = finding["forks"].get<size_t>() + 1;
      if (finding["fork_indices"].size() < kIndicesPerFinding && f.contains("index"))
        finding["fork_indices"].push_back(f["index"]);
    }
  }
  json out = json::array();  // those that fail first, each group in the order found
  for (bool allowed : {false, true})
    for (const auto& finding : all)
      if (finding["allowed"].get<bool>() == allowed) out.push_back(finding);
  return out;
}

}  // namespace fc::harness
