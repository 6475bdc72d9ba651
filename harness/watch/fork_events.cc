#include "harness/watch/fork_events.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <utility>

#include "harness/base/json_shape.h"
#include "harness/supervise/exit_status.h"

namespace fc::harness {
namespace {

using json = nlohmann::json;

// Whether an event line has every field the shim writes of the type it writes (those it lacks
// are defaulted where they are read): the pairing and the hazard rules read them with value(),
// which throws on another type.
bool well_typed(const json& e) {
  using K = JsonKind;
  static const std::pair<const char*, K> kFields[] = {
      {"ev", K::kString},         {"t", K::kInteger},     {"pid", K::kInteger},
      {"child", K::kInteger},     {"tid", K::kInteger},   {"seq", K::kInteger},
      {"of_seq", K::kInteger},    {"code", K::kInteger},  {"signal", K::kInteger},
      {"errno", K::kInteger},     {"fd", K::kInteger},    {"threads", K::kInteger},
      {"img", K::kString},        {"of_img", K::kString}, {"cmd", K::kString},
      {"path", K::kString},       {"how", K::kString},    {"tname", K::kString},
      {"core", K::kBoolean},      {"main", K::kBoolean},  {"truncated", K::kBoolean},
      {"argv", K::kArray},        {"bt", K::kArray},      {"runtimes", K::kArray},
      {"thread_list", K::kArray}, {"cuda", K::kObject}};
  for (const auto& [key, kind] : kFields)
    if (!member_problem(e, key, kind, /*required=*/false).empty()) return false;
  if (e.contains("thread_list"))
    for (const auto& t : e["thread_list"])
      if (!t.is_object() || !member_problem(t, "tid", K::kInteger, false).empty() ||
          !member_problem(t, "name", K::kString, false).empty() ||
          !member_problem(t, "by", K::kString, false).empty())
        return false;
  if (e.contains("cuda"))
    for (const auto& [key, kind] :
         {std::pair{"loaded", K::kBoolean}, std::pair{"initialised", K::kBoolean},
          std::pair{"devices", K::kInteger}})
      if (!member_problem(e["cuda"], key, kind, false).empty()) return false;
  return true;
}

uint64_t time_of(const json& e) { return e.value("t", uint64_t{0}); }

bool by_time(const json* a, const json* b) { return time_of(*a) < time_of(*b); }

// The end of a child as its parent's wait saw it.
json end_from_reap(const json& reap) {
  json end = {{"seen_by", "parent (wait)"}};
  if (reap.contains("signal")) {
    const int sig = reap.value("signal", 0);
    end["how"] = "killed";
    end["signal"] = sig;
    end["signal_name"] = signal_name(sig);
    end["core"] = reap.value("core", false);
  } else {
    end["how"] = "exited";
    end["code"] = reap.value("code", -1);
  }
  return end;
}

// The end of a child as it reported it itself (nobody waited for it, or not through libc).
json end_from_child(const json& ev) {
  json end = {{"how", "exited"}, {"via", ev.value("how", "")}, {"seen_by", "child"}};
  if (ev.contains("code"))
    end["code"] = ev["code"];
  else
    end["note"] = "returned from main: the status is not known to the child";
  return end;
}

}  // namespace

WatchEvents read_watch_events(const std::filesystem::path& dir) {
  WatchEvents out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".jsonl") continue;
    ++out.files;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded() || !j.is_object() || !j.contains("ev") || !well_typed(j)) {
        ++out.bad_lines;
        continue;
      }
      out.events.push_back(std::move(j));
    }
  }
  return out;
}

json pair_fork_events(const std::vector<json>& events, uint64_t start_ns) {
  std::vector<const json*> forks;
  std::map<std::pair<std::string, uint64_t>, std::vector<const json*>> from_child;  // by fork
  std::map<std::pair<int64_t, int64_t>, std::vector<const json*>> reaps;  // by (waiter, child)
  for (const auto& e : events) {
    const std::string ev = e.value("ev", "");
    if (ev == "fork" && e.contains("child")) {
      forks.push_back(&e);
    } else if (ev == "exec" || ev == "exec_failed" || ev == "end") {
      from_child[{e.value("of_img", ""), e.value("of_seq", uint64_t{0})}].push_back(&e);
    } else if (ev == "reaped") {
      reaps[{e.value("pid", int64_t{0}), e.value("child", int64_t{0})}].push_back(&e);
    }
  }
  std::sort(forks.begin(), forks.end(), by_time);
  for (auto& [key, list] : from_child) std::sort(list.begin(), list.end(), by_time);
  for (auto& [key, list] : reaps) std::sort(list.begin(), list.end(), by_time);
  std::map<std::pair<int64_t, int64_t>, size_t> reaps_used;

  json out = json::array();
  for (const json* f : forks) {
    const uint64_t t = time_of(*f);
    const int64_t pid = f->value("pid", int64_t{0}), child = f->value("child", int64_t{0});
    json r = {{"index", out.size() + 1},
              {"pid", pid},
              {"command", f->value("cmd", "")},
              {"child", child},
              {"seq", f->value("seq", uint64_t{0})},
              {"thread",
               {{"tid", f->value("tid", int64_t{0})},
                {"name", f->value("tname", "")},
                {"main", f->value("main", false)}}},
              {"threads", f->value("threads", 0)},
              {"thread_list", f->value("thread_list", json::array())},
              {"runtimes", f->value("runtimes", json::array())},
              {"cuda", f->value("cuda", json{{"loaded", false}})},
              {"backtrace", f->value("bt", json::array())}};
    r["at_s"] = start_ns && t >= start_ns ? json(static_cast<double>(t - start_ns) / 1e9) : json();
    if (f->contains("threads_listed")) r["threads_listed"] = (*f)["threads_listed"];
    if (f->value("truncated", false)) r["truncated"] = true;

    // What the child said about itself before it exec'd.
    const json* last_exec = nullptr;
    const json* exec_failed = nullptr;
    const json* child_end = nullptr;
    auto it = from_child.find({f->value("img", ""), f->value("seq", uint64_t{0})});
    if (it != from_child.end()) {
      for (const json* e : it->second) {
        const std::string ev = e->value("ev", "");
        if (ev == "exec") {
          last_exec = e;
          exec_failed = nullptr;  // an earlier exec failed, this one is the latest word
        } else if (ev == "exec_failed" && last_exec) {
          exec_failed = e;
        } else if (ev == "end" && !child_end) {
          child_end = e;
        }
      }
    }
    r["exec"] = last_exec != nullptr;
    if (last_exec) {
      r["exec_path"] = last_exec->contains("path")
                           ? last_exec->value("path", "")
                           : "fd " + std::to_string(last_exec->value("fd", -1));
      r["exec_argv"] = last_exec->value("argv", json::array());
    }
    if (exec_failed) {
      const int err = exec_failed->value("errno", 0);
      r["exec_errno"] = err;
      r["exec_error"] = std::strerror(err);
    }

    // Its end: the parent's wait is the whole truth (a signal too); the child's word otherwise.
    const std::pair<int64_t, int64_t> key{pid, child};
    const json* reap = nullptr;
    if (auto rit = reaps.find(key); rit != reaps.end()) {
      size_t& used = reaps_used[key];
      while (used < rit->second.size() && time_of(*rit->second[used]) < t) ++used;
      if (used < rit->second.size()) reap = rit->second[used++];
    }
    if (reap)
      r["child_end"] = end_from_reap(*reap);
    else if (child_end)
      r["child_end"] = end_from_child(*child_end);
    else
      r["child_end"] = {{"how", "unknown"},
                        {"note",
                         "its parent did not wait for it, and it did not exit through "
                         "libc before exec (killed, or still running at the end)"}};
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace fc::harness
