#include "harness/watch/python_forks.h"

#include <map>
#include <utility>
#include <vector>

#include "reports/model/report_model_json.h"
#include "reports/python_view.h"
#include "reports/report_view.h"

namespace fc::harness {
namespace {

using json = nlohmann::json;

using reports::list;
using reports::member;

// "train.py:12": where a thread was started, from its started_at frame.
std::string started_at(const json& thread) {
  const json& f = member(thread, "started_at");
  return f.is_object() ? reports::python_frame_text(reports::read_as<reports::PythonFrame>(f)) : "";
}

// Whether `file` is the user's own, by the sysconfig paths `process` sent (when it did).
bool users_file(const std::string& file, const json* process) {
  const json& paths = process ? member(*process, "paths") : json();
  if (!paths.is_object()) return reports::users_file(file);
  const auto read = reports::read_as<reports::PythonPaths>(paths);
  return reports::users_file(file, &read);
}

}  // namespace

void add_python_sites(json& forks, const json& python_facts) {
  const json& processes = member(python_facts, "processes");
  if (!processes.is_array()) return;
  // parent pid -> its fork entries (each for one fork, or several alike: fork_entry_covers), and
  // child pid -> (parent pid, fork seq).
  std::map<int, std::vector<const json*>> events;
  std::map<int, std::pair<int, int>> born;
  std::map<int, const json*> by_pid;
  for (const auto& p : processes) {
    if (!member(p, "pid").is_number_integer()) continue;
    const int pid = p["pid"].get<int>();
    by_pid[pid] = &p;
    for (const auto& f : list(p, "forks"))
      if (member(f, "seq").is_number_integer()) events[pid].push_back(&f);
    if (member(p, "born") == "fork" && member(p, "ppid").is_number_integer() &&
        member(p, "fork_seq").is_number_integer())
      born[pid] = {p["ppid"].get<int>(), p["fork_seq"].get<int>()};
  }
  for (auto& fork : forks) {
    const json& child = member(fork, "child");
    if (!child.is_number_integer()) continue;
    auto b = born.find(child.get<int>());
    if (b == born.end() || member(fork, "pid") != b->second.first) continue;
    const json* found = nullptr;
    for (const json* f : events[b->second.first])
      if (reports::fork_entry_covers(reports::read_as<reports::PythonFork>(*f), b->second.second))
        found = f;
    if (!found) continue;
    const json& event = *found;
    const json* parent = by_pid[b->second.first];
    // Where it forked: the deepest frame in the user's own files, with its source line.
    std::string site;
    const json& stack = member(event, "stack");
    if (stack.is_array())
      for (auto it = stack.rbegin(); it != stack.rend() && site.empty(); ++it)
        if (users_file(member(*it, "file").is_string() ? (*it)["file"].get<std::string>() : "",
                       parent))
          site = reports::python_frame_text(reports::read_as<reports::PythonFrame>(*it)) +
                 (member(*it, "code").is_string() ? ": " + (*it)["code"].get<std::string>() : "");
    json threads = json::array();
    std::map<long long, const json*> by_native;
    for (const auto& t : list(event, "threads")) {
      threads.push_back({{"name", member(t, "name")}, {"started_at", started_at(t)}});
      if (member(t, "native_id").is_number_integer())
        by_native[t["native_id"].get<long long>()] = &t;
    }
    fork["python"] = {{"stack", stack}, {"site", site}, {"threads", threads}};
    // The shim's threads by their Python names: "metrics-flusher" (started at train.py:12).
    if (!fork["thread_list"].is_array()) continue;
    for (auto& t : fork["thread_list"]) {
      auto p =
          by_native.find(member(t, "tid").is_number_integer() ? t["tid"].get<long long>() : -1);
      if (p == by_native.end()) continue;
      t["python_name"] = member(*p->second, "name");
      if (const std::string at = started_at(*p->second); !at.empty()) t["started_at"] = at;
    }
  }
}

}  // namespace fc::harness
