#include "reports/run_log.h"

#include <fstream>
#include <map>
#include <stdexcept>

#include "reports/file_io.h"
#include "reports/known_causes.h"
#include "reports/model/report_model_json.h"
#include "reports/python_view.h"
#include "reports/report_view.h"
#include "reports/verdict.h"

namespace fc::reports {
namespace {

// The ends of a user's program's processes of note (not exit 0): those that fail it and those
// not counted, each with why (the first kListed of each).
nlohmann::json process_ends(const Variant& variant) {
  constexpr size_t kListed = 100;
  auto listed = [](const std::vector<DescendantEnd>& ends) {
    nlohmann::json list = nlohmann::json::array();
    for (size_t i = 0; i < ends.size() && i < kListed; ++i) {
      const DescendantEnd& d = ends[i];
      nlohmann::json e = {{"pid", d.pid}, {"what", d.what}, {"how", d.how}, {"where", d.where}};
      if (!d.not_counted.empty()) e["why"] = d.not_counted;
      list.push_back(std::move(e));
    }
    return nlohmann::json{{"count", ends.size()}, {"list", std::move(list)}};
  };
  return {{"failed", listed(failed_descendants(variant))},
          {"not_counted", listed(uncounted_descendants(variant))}};
}

}  // namespace

RunLog::RunLog(const std::filesystem::path& path) : path_(path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);  // the link itself when it is one
  if (ec)
    throw std::runtime_error("cannot remove the old run log " + path.u8string() + ": " +
                             ec.message());
  std::string error;
  f_ = file_io::create_new_for_writing(path, error);
  if (!f_) throw std::runtime_error("cannot write the run log " + path.u8string() + ": " + error);
}

RunLog::~RunLog() {
  if (f_) std::fclose(f_);
}

void RunLog::append(const nlohmann::json& line) {
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  lines_.push_back(nlohmann::json::parse(text));
  text += '\n';
  std::fwrite(text.data(), 1, text.size(), f_);
  std::fflush(f_);  // each line reaches the kernel as it is written: a SIGKILL loses nothing
}

std::vector<nlohmann::json> read_run_log(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::vector<nlohmann::json> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) continue;  // a torn last line
    lines.push_back(std::move(j));
  }
  return lines;
}

namespace {

nlohmann::json summarize(const std::vector<Case>& cases) {
  nlohmann::json by_verdict = nlohmann::json::object(), by_outcome = nlohmann::json::object();
  int variants = 0, mismatches = 0, regressions = 0, failed = 0, harness_failures = 0;
  for (const Case& c : cases) {
    by_verdict[c.verdict] = by_verdict.value(c.verdict, 0) + 1;
    // A fix that misbehaved is a regression; a user's program that failed is not (by_verdict
    // counts it as "failed"): either makes the run not ok.
    if (c.verdict == "regression") ++regressions;
    if (c.verdict == "failed") ++failed;
    for (const Variant& v : c.variants) {
      ++variants;
      const std::string o = v.outcome.empty() ? "skip" : v.outcome;
      by_outcome[o] = by_outcome.value(o, 0) + 1;
      // Not seen to its end (forkcheck was interrupted): neither as expected nor not.
      if (!v.matched && !unfinished(v)) ++mismatches;
      if (v.harness_error) ++harness_failures;
    }
  }
  return {{"cases", cases.size()},
          {"variants", variants},
          {"by_verdict", by_verdict},
          {"by_outcome", by_outcome},
          {"mismatches", mismatches},
          {"regressions", regressions},
          {"harness_failures", harness_failures},
          {"ok", regressions == 0 && failed == 0 && harness_failures == 0}};
}

}  // namespace

nlohmann::json fold_run_log(const std::vector<nlohmann::json>& lines) {
  nlohmann::json report = {{"schema_version", kSchemaVersion},
                           {"tool", {{"name", "forkcheck"}, {"version", "unknown"}}},
                           {"run", nlohmann::json::object()},
                           {"cases", nlohmann::json::array()}};
  std::map<std::string, size_t> case_index;
  bool ended = false;
  for (const auto& line : lines) {
    const std::string type = line.value("type", "");
    if (type == "run") {
      report["run"] = line;
      report["run"].erase("type");
      if (line.contains("tool")) report["tool"] = line["tool"];
      report["run"].erase("tool");
    } else if (type == "case") {
      nlohmann::json c = line;
      c.erase("type");
      case_index[c.value("id", "")] = report["cases"].size();
      report["cases"].push_back(std::move(c));
    } else if (type == "variant") {
      auto it = case_index.find(line.value("case", ""));
      if (it == case_index.end()) continue;
      auto& variants = report["cases"][it->second]["variants"];
      for (auto& v : variants)
        if (v.value("name", "") == line.value("name", "")) {
          for (const auto& [k, val] : line.items())
            if (k != "type" && k != "case") v[k] = val;
        }
    } else if (type == "end") {
      ended = true;
      for (const auto& [k, val] : line.items()) {
        if (k == "environment" && val.is_object() && report["run"].contains("environment") &&
            report["run"]["environment"].is_object()) {
          for (const auto& [ek, ev] : val.items())
            report["run"]["environment"][ek] = ev;  // learnt later
        } else if (k != "type") {
          report["run"][k] = val;
        }
      }
    }
  }
  if (!ended) report["run"]["complete"] = false;
  const bool interrupted = report["run"].value("interrupted", false) || !ended;
  std::vector<Case> typed_cases;  // what the summary counts
  for (auto& c : report["cases"]) {
    for (auto& v : c["variants"]) {
      if (v.contains("outcome")) continue;
      v["outcome"] = "skip";
      v["message"] =
          interrupted ? "not run: the run was interrupted before this variant ended" : "not run";
      v["not_run"] = true;
    }
    // Every variant has every field the schema (report.schema.json) requires, run or not.
    for (auto& v : c["variants"]) {
      const nlohmann::json defaults = {{"message", ""},
                                       {"duration_s", 0.0},
                                       {"exit", {{"code", nullptr}, {"signal", nullptr}}},
                                       {"stdout", ""},
                                       {"stderr", ""},
                                       {"details", nlohmann::json::object()},
                                       {"stacks", nlohmann::json::array()}};
      for (const auto& [k, val] : defaults.items())
        if (!v.contains(k)) v[k] = val;
    }
    // The case as the verdict and the summary read it: each variant read once, here.
    Case typed = read_as<Case>(
        nlohmann::json{{"not_selected", c.value("not_selected", nlohmann::json::array())}});
    for (auto& v : c["variants"]) {
      // A user's program that exited 0 while processes of it failed did not do its work.
      mark_processes_failed(v);
      v["matched"] = v["outcome"] == v["expected"];
      Variant model = read_variant(v);
      // A user's program that failed: the cause its shape shows, where a rule knows it.
      // (Not for one that exited 0: its workers' failures are said as such.)
      if (model.role == "subject" && model.outcome != "ok" && model.outcome != "skip" &&
          !exited_zero_but_processes_failed(model))
        if (const auto cause = known_cause(model)) v["cause"] = to_json(*cause);
      if (model.role == "subject" && v.contains("python")) v["process_ends"] = process_ends(model);
      typed.variants.push_back(std::move(model));
    }
    auto verdict = case_verdict(typed.variants, typed.not_selected);
    c["verdict"] = verdict.verdict;
    c["verdict_reason"] = verdict.reason;
    typed.verdict = verdict.verdict;
    typed_cases.push_back(std::move(typed));
  }
  report["summary"] = summarize(typed_cases);
  // Cases a repro program could not list are missing: the run is not ok (forkcheck exits 1).
  if (!list(report["run"], "catalog_errors").empty()) report["summary"]["ok"] = false;
  return report;
}

}  // namespace fc::reports
