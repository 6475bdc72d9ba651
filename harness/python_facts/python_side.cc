#include "harness/python_facts/python_side.h"

#include "reports/report_view.h"

namespace fc::harness {
namespace {

using json = nlohmann::json;

using reports::member;

// The program's own Python process: the root, else the first process that started by exec.
const json* main_process(const json& facts, int root_pid) {
  const json& processes = member(facts, "processes");
  if (!processes.is_array()) return nullptr;
  const json* first = nullptr;
  for (const auto& p : processes) {
    if (member(p, "pid") == root_pid) return &p;
    if (member(p, "born") == "exec" &&
        (!first || member(p, "first_seen_s") < member(*first, "first_seen_s")))
      first = &p;
  }
  return first;
}

// torch as the bootstrap saw it (its torch event) in the probe's words.
json torch_of(const json& t) {
  if (!t.is_object()) return {{"missing", "the program did not import torch"}};
  json out = {
      {"version", member(t, "version")},
      {"threads",
       {{"intra_op", member(t, "num_threads")}, {"inter_op", member(t, "num_interop_threads")}}}};
  if (member(t, "sharing_strategy").is_string()) out["sharing_strategy"] = t["sharing_strategy"];
  const json& info = member(t, "parallel_info");
  if (info.is_string()) {
    out["parallel_info"] = info;
    const std::string text = info.get<std::string>();
    for (size_t at = 0; at < text.size();) {
      const size_t end = text.find('\n', at);
      const std::string line =
          text.substr(at, end == std::string::npos ? std::string::npos : end - at);
      if (line.find("OpenMP") != std::string::npos && !out.contains("openmp")) out["openmp"] = line;
      if (line.rfind("ATen parallel backend", 0) == 0)
        out["parallel_backend"] =
            line.substr(line.find(':') == std::string::npos ? 0 : line.find(':') + 2);
      if (end == std::string::npos) break;
      at = end + 1;
    }
  } else if (info.is_array()) {
    out["parallel_info"] = info;
  }
  return out;
}

}  // namespace

json program_python_environment(const json& facts, int root_pid, const std::string& program) {
  const std::string base = program.substr(program.find_last_of("/\\") + 1);
  const bool looks_python = base.rfind("python", 0) == 0;
  const json* p = main_process(facts, root_pid);
  if (!p) {
    if (!looks_python) return nullptr;
    return {{"asked", "the program itself"},
            {"interpreter", program},
            {"status", "failed"},
            {"error",
             "its Python never reached forkcheck's bootstrap (started with -I, -E or -S, "
             "or its PYTHONPATH replaced): no Python facts"}};
  }
  json out = {{"asked", "the program itself"},
              {"source", "bootstrap"},
              {"status", "ok"},
              {"pid", member(*p, "pid")},
              {"python", member(*p, "python")},
              {"torch", torch_of(member(*p, "torch"))}};
  if (member(*p, "start_method").is_string() &&
      !member(*p, "start_method").get<std::string>().empty())
    out["multiprocessing"] = {{"default_start_method", (*p)["start_method"]}};
  return out;
}

}  // namespace fc::harness
