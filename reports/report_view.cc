#include "reports/report_view.h"

#include <algorithm>
#include <cstdio>

#include "reports/model/report_model_json.h"
#include "reports/python_view.h"
#include "reports/text.h"
#include "reports/torch_cases.h"
#include "reports/whose_torch.h"

namespace fc::reports {
namespace {

std::string join(const nlohmann::json& list, const std::string& sep) {
  std::string out;
  if (!list.is_array()) return display(list);
  for (const auto& item : list) out += (out.empty() ? "" : sep) + display(item);
  return out;
}

// obj[key] is true: absent, null or not a boolean is false.
bool flag(const nlohmann::json* obj, const char* key) {
  if (obj == nullptr || !obj->is_object()) return false;
  auto it = obj->find(key);
  return it != obj->end() && it->is_boolean() && it->get<bool>();
}

}  // namespace

const nlohmann::json* object_at(const nlohmann::json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? &*it : nullptr;
}

bool is_true(const nlohmann::json& obj, const char* key) { return flag(&obj, key); }

const nlohmann::json& list(const nlohmann::json& obj, const char* key) {
  static const nlohmann::json empty = nlohmann::json::array();
  if (!obj.is_object()) return empty;
  auto it = obj.find(key);
  return it != obj.end() && it->is_array() ? *it : empty;
}

const nlohmann::json& member(const nlohmann::json& obj, const char* key) {
  static const nlohmann::json null;
  if (!obj.is_object()) return null;
  auto it = obj.find(key);
  return it != obj.end() ? *it : null;
}

std::vector<std::string> matrix_methods(const Report& report) {
  std::vector<std::string> methods = {"fork", "spawn", "forkserver"};
  for (const Case& c : report.cases)
    for (const Variant& v : c.variants) {
      const std::string m = v.start_method.empty() ? "none" : v.start_method;
      if (std::find(methods.begin(), methods.end(), m) == methods.end()) methods.push_back(m);
    }
  return methods;
}

std::vector<const Variant*> variants_with_method(const Case& c, const std::string& method) {
  std::vector<const Variant*> out;
  for (const Variant& v : c.variants)
    if ((v.start_method.empty() ? "none" : v.start_method) == method) out.push_back(&v);
  return out;
}

namespace {
std::string outcome_of(const Variant& v) { return or_else(v.outcome, "skip"); }
std::string expected_of(const Variant& v) { return or_else(v.expected, "?"); }
}  // namespace

bool matched(const Variant& v) { return outcome_of(v) == v.expected; }

bool unfinished(const Variant& v) { return v.not_run || v.interrupted; }

bool mismatched(const Variant& v) { return !matched(v) && !unfinished(v); }

std::string outcome_shown(const Variant& v) {
  if (v.not_run) return "not run";
  if (v.interrupted) return "not finished";
  return outcome_of(v);
}

std::string outcome_vs_expected(const Variant& v) {
  // A user's program was expected nothing: how it ended is all there is to say.
  if (v.role == "subject") return outcome_shown(v);
  if (unfinished(v)) return outcome_shown(v) + " (expected " + expected_of(v) + ")";
  return outcome_of(v) + (matched(v) ? " \u2713 expected " : " \u2717 expected ") + expected_of(v);
}

std::string outcome_meaning(const std::string& outcome) {
  if (outcome == "timeout") return "the deadline passed while the process tree was not blocked";
  if (outcome == "protocol-error")
    return "the child sent something on its channel that is not a forkcheck message";
  return "";
}

std::string mismatch_meaning(const Variant& v) {
  const std::string expected = expected_of(v), outcome = outcome_of(v);
  if (v.role == "subject") {
    const std::string meaning = outcome_meaning(outcome);
    std::string how = outcome + (meaning.empty() ? "" : " (" + meaning + ")");
    if (exited_zero_but_processes_failed(v)) how = "exited 0, but " + descendants_failure_count(v);
    return std::string(unfinished(v) ? "not run to its end" : "the program did not end well") +
           ": " + how;
  }
  std::string what = "expected " + expected + ", observed " + outcome;
  if (const std::string meaning = outcome_meaning(outcome); !meaning.empty())
    what += " (" + meaning + (expected == "hang" && outcome == "timeout" ? ": not a hang)" : ")");
  if (unfinished(v)) return "not run to its end: " + what;
  if (v.harness_error) return "harness error: " + what;
  if (v.role == "fix") return "regression: the fixed behaviour broke: " + what;
  return "the hazard did not show as documented here: " + what;
}

std::string stacks_title(const Variant& v) {
  if (v.outcome == "hang") return "stacks of the hung process tree";
  if (v.outcome == "timeout") {
    if (v.watchdog.tree && v.watchdog.tree->state == "sleeping")
      return "stacks of the process tree at the deadline, while it slept in a wait that ends by "
             "itself";
    return "stacks of the process tree at the deadline, while it was still working";
  }
  if (v.watchdog.exited_by_itself)
    return "stacks of the process tree, taken before it exited by itself";
  return "stacks of the process tree";
}

std::string thread_line(const Thread& t) {
  std::string line =
      "pid " + std::to_string(t.pid) + " tid " + std::to_string(t.tid) + " " + t.name;
  if (!t.state.empty()) line += " [" + t.state + (t.wchan.empty() ? "" : " " + t.wchan) + "]";
  if (!t.syscall.empty()) line += " in syscall " + t.syscall;
  return line;
}

namespace {

std::string line_of(const PythonFrame& f) { return f.line ? std::to_string(*f.line) : ""; }

std::string python_frame_line(const PythonFrame& f) {
  if (f.file.empty()) return f.function;
  return f.file + ":" + line_of(f) + " in " + f.function;
}

// Python's own library and installed packages: where a wait shows up, not where it comes from.
bool library_file(const std::string& file) {
  // forkcheck's own bootstrap (its wrappers are on the stack of a program that waits in them).
  if (file.find("/forkcheck_boot.py") != std::string::npos ||
      file.find("/forkcheck/python/sitecustomize.py") != std::string::npos)
    return true;
  return file.empty() || file.front() == '<' || file.find("/lib/python") != std::string::npos ||
         file.find("site-packages/") != std::string::npos ||
         file.find("dist-packages/") != std::string::npos;
}

}  // namespace

std::string python_frames_text(const Thread& thread, size_t max_frames) {
  std::string text;
  size_t i = 0;
  for (const PythonFrame& f : thread.python) {
    if (i++ == max_frames) {
      text += "  ...\n";
      break;
    }
    text += "  " + python_frame_line(f) + "\n";
    if (!f.code.empty()) text += "      " + f.code + "\n";
  }
  return text;
}

std::string python_where(const Thread& thread) {
  for (const PythonFrame& f : thread.python)
    if (!library_file(f.file))
      return f.file.substr(f.file.rfind('/') + 1) + ":" + line_of(f) + " in " + f.function;
  return thread.python.empty() ? "" : python_frame_line(thread.python.front());
}

const Case* featured_case(const Report& report) {
  for (const Case& c : report.cases)
    if (c.featured) return &c;
  return nullptr;
}

const Case* find_case(const Report& report, const std::string& id) {
  for (const Case& c : report.cases)
    if (c.id == id) return &c;
  return nullptr;
}

const nlohmann::json& workers(const Variant& variant) { return list(variant.details, "workers"); }

std::vector<std::string> failed_workers(const Variant& variant, size_t max) {
  std::vector<std::string> lines;
  size_t failed = 0, i = 0;
  for (const auto& w : workers(variant)) {
    const std::string index = std::to_string(i++);
    if (!w.is_object() || field(w, "status", "ok") == "ok") continue;
    if (++failed > max) continue;
    std::string line = "worker " + field(w, "index", index) + " (pid " + field(w, "pid", "?");
    if (!field(w, "start_method").empty()) line += ", " + field(w, "start_method");
    line += "): " + field(w, "error", field(w, "status"));
    if (w.contains("ended_after_s") && w["ended_after_s"].is_number())
      line += ", " + format_seconds(w["ended_after_s"].get<double>()) + " after the pool started";
    lines.push_back(std::move(line));
  }
  if (failed > max) lines.push_back("and " + std::to_string(failed - max) + " more");
  return lines;
}

namespace {
std::string cell_text(const nlohmann::json& v) {
  if (!v.is_number_float()) return display(v);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4f", v.get<double>());
  return buf;
}
}  // namespace

std::vector<DetailTable> detail_tables(const Variant& variant) {
  std::vector<DetailTable> tables;
  for (const auto& t : list(variant.details, "tables")) {
    DetailTable table;
    table.title = field(t, "title");
    for (const auto& c : list(t, "columns")) table.columns.push_back(display(c));
    for (const auto& r : list(t, "rows")) {
      DetailTable::Row row;
      for (const auto& c : list(r, "cells")) {
        row.cells.push_back(cell_text(c));
        row.number.push_back(c.is_number());
      }
      row.cells.resize(table.columns.size());  // a short row's missing cells are empty
      row.number.resize(table.columns.size());
      row.status = field(r, "status");
      table.rows.push_back(std::move(row));
    }
    if (!table.columns.empty()) tables.push_back(std::move(table));
  }
  return tables;
}

std::vector<DetailChart> detail_charts(const Variant& variant) {
  std::vector<DetailChart> charts;
  for (const auto& c : list(variant.details, "charts")) {
    DetailChart chart{field(c, "title"), field(c, "x_label"), field(c, "y_label"), {}};
    for (const auto& s : list(c, "series")) {
      ChartSeries one{field(s, "label"), {}};
      for (const auto& y : list(s, "y"))
        if (y.is_number()) one.y.push_back(y.get<double>());
      if (!one.y.empty()) chart.series.push_back(std::move(one));
    }
    if (!chart.series.empty()) charts.push_back(std::move(chart));
  }
  return charts;
}

nlohmann::json details_without_views(const Variant& variant) {
  nlohmann::json d = variant.details;
  if (!d.is_object()) return d;
  d.erase("tables");
  d.erase("charts");
  return d;
}

std::vector<EnvRow> environment_rows(const Environment& env) {
  std::vector<EnvRow> rows;
  const bool recorded = !env.error.empty() || env.collected_by || env.machine || env.python ||
                        !env.os.is_null() || env.libtorch || env.threads || env.torch_cases ||
                        !env.variables.empty() || !env.libraries.is_null() || !env.cpus.is_null();
  if (!recorded) {
    rows.push_back({"environment", "not recorded in this run"});
    return rows;
  }
  auto add = [&](const std::string& label, const std::string& value, bool block = false) {
    if (!value.empty()) rows.push_back({label, value, block});
  };
  add("environment", env.error);
  const bool user_program = env.collected_by && env.collected_by->user_program;
  if (env.collected_by) {
    const EnvCollectedBy& by = *env.collected_by;
    std::string v = or_else(by.program, "?");
    if (!by.fallback.empty()) v += " (" + by.fallback + ")";
    // A user's program's: forkcheck read the machine itself; the program's own side is below.
    if (by.user_program)
      v = "forkcheck itself (" + v + ")" +
          (env.python && env.python->source == "bootstrap" ? ", and the program's own Python side"
                                                           : "");
    add("collected by", v);
  }
  // The repro program's own lists (os, libc, cpus, CUDA, ptrace_scope, the libraries mapped)
  // are rendered as they come.
  if (const auto& os = env.os; os.is_object()) {
    add("OS",
        field(os, "name", "?") + " (" + field(os, "sysname") + " " + field(os, "machine") + ")");
    add("kernel", field(os, "kernel") + " " + field(os, "kernel_build"));
  }
  if (env.libc.is_object()) add("libc", field(env.libc, "name") + " " + field(env.libc, "version"));
  add("compiler (repro programs)", env.compiler);
  if (env.cpus.is_object())
    add("CPUs", display(env.cpus.value("online", nlohmann::json())) + " online, " +
                    display(env.cpus.value("affinity", nlohmann::json())) +
                    " usable by this process");
  const auto yes_no = [](const std::optional<bool>& b) { return b ? (*b ? "yes" : "no") : "?"; };
  if (env.libtorch) {
    const EnvLibtorch& t = *env.libtorch;
    const std::string library = catalog_libtorch(env)->library;
    add("libtorch", or_else(t.version, "?") + (library.empty() ? "" : " at " + library) +
                        " (OpenMP " + yes_no(t.has_openmp) + ", MKL " + yes_no(t.has_mkl) +
                        ", MKL-DNN " + yes_no(t.has_mkldnn) + ", LAPACK " + yes_no(t.has_lapack) +
                        ", CUDA devices " +
                        (t.cuda_devices ? std::to_string(*t.cuda_devices) : "?") + ")");
  } else if (!env.torch_cases && built_without_torch(env)) {
    add("libtorch", kNoTorchProgram);
  } else if (!user_program) {
    // (A user's program: its own torch is said by its Python side, not the catalog's.)
    add("libtorch", "not loaded by the program that collected this");
  }
  // A package's torch cases: built here against the user's torch, or why none ran.
  if (env.torch_cases) add("torch cases", run_torch_cases_text(env));
  // The Python torch found beside it (forkcheck all, run): the same libtorch, or another one.
  add("Python torch", python_torch_sentence(catalog_libtorch(env), env.python_torch));
  if (!env.openmp_runtimes.is_null())
    add("OpenMP runtime(s) loaded",
        env.openmp_runtimes.empty() ? "none" : join(env.openmp_runtimes, "; "));
  if (!env.blas.is_null()) add("BLAS loaded", env.blas.empty() ? "none" : join(env.blas, "; "));
  if (env.threads) {
    // In the order report.json lists them (its keys sorted).
    std::string t;
    auto count = [&t](const char* name, const std::optional<long long>& n) {
      if (n) t += (t.empty() ? "" : ", ") + std::string(name) + " " + std::to_string(*n);
    };
    count("nproc", env.threads->nproc);
    count("omp_get_max_threads", env.threads->omp_get_max_threads);
    count("torch_inter_op", env.threads->torch_inter_op);
    count("torch_intra_op", env.threads->torch_intra_op);
    add("default threads", t);
  }
  if (env.cuda.is_object()) {
    std::string v = field(env.cuda, "summary");
    for (const auto& d : env.cuda.value("devices", nlohmann::json::array()))
      v += "; #" + display(d.value("index", nlohmann::json())) + " " + field(d, "name") +
           (d.contains("compute_capability") ? " (sm " + display(d["compute_capability"]) + ")"
                                             : "");
    add("CUDA", v);
  }
  std::string methods;
  for (const auto& m : env.start_methods) methods += (methods.empty() ? "" : ", ") + m;
  add("start methods here", methods);
  if (const auto& p = env.ptrace_scope; p.is_object())
    add("Yama ptrace_scope", member(p, "value").is_null()
                                 ? field(p, "meaning")
                                 : display(p["value"]) + ": " + field(p, "meaning"));
  // Every program that collects an environment lists the variables set (host_facts.h).
  if (env.collected_by || !env.variables.empty()) {
    std::string v;
    for (const auto& [k, val] : env.variables) v += (v.empty() ? "" : " ") + k + "=" + val;
    add("variables", v.empty() ? "none of the OpenMP/BLAS/CUDA/fork variables is set" : v);
  }
  if (env.libraries.is_array()) {
    std::string v;
    for (const auto& l : env.libraries) {
      v += field(l, "path", "?");
      if (l.contains("real_path")) v += " -> " + display(l["real_path"]);
      if (l.contains("version")) v += " [" + display(l["version"]) + "]";
      if (l.contains("max_threads")) v += " (max threads " + display(l["max_threads"]) + ")";
      v += "\n";
    }
    if (!v.empty()) v.pop_back();
    add("libraries mapped", v, true);
  }
  if (env.libtorch) {
    add("libtorch parallel info", env.libtorch->parallel_info, true);
    add("libtorch build settings", env.libtorch->config, true);
  }
  return rows;
}

}  // namespace fc::reports
