#include "reports/report_diff.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "reports/model/report_model.h"
#include "reports/report_view.h"
#include "reports/text.h"

namespace fc::reports {
namespace {

using nlohmann::json;

// What a person may be shown of a schema_version that is not one (a number, an object).
std::string shown_version(const json& v) { return shorten(display(v), 40); }

// "1.0" -> 1; -1 when it is not MAJOR.MINOR.
int major_version(const std::string& v) {
  const size_t dot = v.find('.');
  if (dot == 0 || dot == std::string::npos || dot + 1 == v.size()) return -1;
  for (size_t i = 0; i < v.size(); ++i)
    if (i != dot && (v[i] < '0' || v[i] > '9')) return -1;
  return std::atoi(v.substr(0, dot).c_str());
}

std::string version_problem(const json& v, const char* where) {
  if (!v.is_string())
    return std::string(where) + " is " + shown_version(v) + ", not a version like \"1.0\"";
  const int major = major_version(v.get<std::string>());
  if (major < 0)
    return std::string(where) + " \"" + shown_version(v) + "\" is not a version like \"1.0\"";
  if (major == kDiffSchemaMajor) return "";
  return std::string(where) + " " + v.get<std::string>() + " is " +
         (major > kDiffSchemaMajor ? "newer than" : "older than") +
         " the 1.x this forkcheck reads" +
         (major > kDiffSchemaMajor ? " (compare it with the forkcheck that wrote it)"
                                   : " (run it again with this forkcheck)");
}

bool failing_verdict(const std::string& v) { return v == "regression" || v == "failed"; }

ReportSide side_of(const Report& r) {
  ReportSide s;
  s.command = r.run.command;
  s.started_at = r.run.started_at;
  s.forkcheck_version = r.tool.version;
  s.schema_version = r.schema_version;
  s.complete = !r.run.interrupted && r.run.complete;
  return s;
}

// The case of `r` with id `id`; exec and watch have one case each, matched whatever its id.
const Case* case_to_compare(const Report& r, const std::string& id, bool program) {
  if (!program) return find_case(r, id);
  return r.cases.empty() ? nullptr : &r.cases[0];
}

const Variant* find_variant(const Case& c, const std::string& name) {
  for (const auto& v : c.variants)
    if (v.name == name) return &v;
  return nullptr;
}

// What a skipped variant said (run_session.cc puts the plan's skip_reason in its message).
std::string skip_reason(const Variant& v) { return v.message.empty() ? v.skip_reason : v.message; }

// One variant in both reports: what changed of its outcome, expectation or skip reason.
void compare_variant(const std::string& case_id, const Variant& va, const Variant& vb,
                     std::vector<CaseChange>& out) {
  CaseChange c;
  c.kind = "outcome";
  c.case_id = case_id;
  c.variant = va.name;
  c.role = vb.role.empty() ? va.role : vb.role;
  c.a = va.outcome;
  c.b = vb.outcome;
  c.expected_a = va.expected;
  c.expected_b = vb.expected;
  // A side that lacks the outcome (an older report) is unknown: nothing to compare.
  if (c.a.empty() || c.b.empty()) return;
  if (c.a == "skip" && c.b == "skip") {
    const std::string ra = skip_reason(va), rb = skip_reason(vb);
    if (ra == rb) return;
    c.kind = "skip-reason";
    c.effect = Effect::kCoverage;
    c.a = ra;
    c.b = rb;
    c.why = "skipped in both, for another reason";
    out.push_back(std::move(c));
    return;
  }
  // An expectation one side lacks is unknown, not different.
  const bool expected_differs =
      !c.expected_a.empty() && !c.expected_b.empty() && c.expected_a != c.expected_b;
  if (c.a == c.b && !expected_differs) return;
  if (c.a == "skip" || c.b == "skip") {
    c.effect = Effect::kCoverage;
    c.why =
        (c.a == "skip" ? "not run in A: " + skip_reason(va) : "not run in B: " + skip_reason(vb));
  } else {
    const bool matched_a = c.expected_a.empty() || c.a == c.expected_a;
    const bool matched_b = c.expected_b.empty() || c.b == c.expected_b;
    // Only a fix (or the user's program) must come out as expected; a hazard that no longer
    // fails as documented says something about the machine, and is no failure of B.
    const bool must_match = c.role == "fix" || c.role == "subject";
    if (must_match && matched_a && !matched_b)
      c.effect = Effect::kRegression;
    else if (must_match && !matched_a && matched_b)
      c.effect = Effect::kImprovement;
    else
      c.effect = Effect::kChanged;
    c.why = vb.message;
  }
  out.push_back(std::move(c));
}

void compare_case(const Case& ca, const Case& cb, bool program, std::vector<CaseChange>& out) {
  const std::string id = cb.id.empty() ? ca.id : cb.id;
  const std::string& verdict_a = ca.verdict;
  const std::string& verdict_b = cb.verdict;
  if (!verdict_a.empty() && !verdict_b.empty() && verdict_a != verdict_b) {
    CaseChange c;
    c.kind = "verdict";
    c.case_id = id;
    c.a = verdict_a;
    c.b = verdict_b;
    c.why = cb.verdict_reason;
    // A side that did not run the case to its end (skipped, partial: interrupted, or not run)
    // says nothing of whether the other fails where it did not.
    if (verdict_a == "skipped" || verdict_b == "skipped" || verdict_a == "partial" ||
        verdict_b == "partial")
      c.effect = Effect::kCoverage;
    else if (!failing_verdict(verdict_a) && failing_verdict(verdict_b))
      c.effect = Effect::kRegression;
    else if (failing_verdict(verdict_a) && !failing_verdict(verdict_b))
      c.effect = Effect::kImprovement;
    else
      c.effect = Effect::kChanged;
    out.push_back(std::move(c));
  }
  // exec and watch: one variant each, the user's program, named after the command.
  if (program && ca.variants.size() == 1 && cb.variants.size() == 1) {
    compare_variant(id, ca.variants[0], cb.variants[0], out);
    return;
  }
  for (const auto& va : ca.variants) {
    if (const Variant* vb = find_variant(cb, va.name)) {
      compare_variant(id, va, *vb, out);
    } else {
      out.push_back({"only-in-a", id, va.name, va.role, va.outcome, "", va.expected, "",
                     Effect::kCoverage,
                     "B has no variant " + va.name + " (not selected, or not in its catalog)"});
    }
  }
  for (const auto& vb : cb.variants)
    if (!find_variant(ca, vb.name))
      out.push_back({"only-in-b", id, vb.name, vb.role, "", vb.outcome, "", vb.expected,
                     Effect::kCoverage,
                     "A has no variant " + vb.name + " (not selected, or not in its catalog)"});
}

// Why B's run is not ok, from its summary and run header.
std::string summary_why(const Report& r) {
  std::string why;
  auto add = [&why](const std::string& part) { why += (why.empty() ? "" : "; ") + part; };
  if (r.summary.harness_failures > 0)
    add(std::to_string(r.summary.harness_failures) + " harness failure(s)");
  if (r.summary.regressions > 0) add(std::to_string(r.summary.regressions) + " failing case(s)");
  if (!r.run.catalog_errors.empty()) add("a repro program could not list its cases");
  return why.empty() ? "summary.ok is false" : why;
}

}  // namespace

bool is_program_report(const Report& r) {
  if (r.run.command == "exec" || r.run.command == "watch") return true;
  for (const auto& c : r.cases)
    for (const auto& v : c.variants)
      if (v.role == "subject") return true;
  return false;
}

const char* effect_name(Effect e) {
  switch (e) {
    case Effect::kRegression:
      return "regression";
    case Effect::kChanged:
      return "changed";
    case Effect::kImprovement:
      return "improvement";
    case Effect::kCoverage:
      return "coverage";
  }
  return "changed";
}

size_t ReportDiff::count(Effect e) const {
  return static_cast<size_t>(std::count_if(changes.begin(), changes.end(),
                                           [e](const CaseChange& c) { return c.effect == e; }));
}

std::string unreadable_report(const json& report) {
  if (!report.is_object()) return "not a forkcheck report (not a JSON object)";
  if (const std::string tool = field(member(report, "tool"), "name");
      !tool.empty() && tool != "forkcheck")
    return "not a forkcheck report (made by " + shorten(tool, 40) + ")";
  if (!report.contains("schema_version"))
    return "not a forkcheck report.json: it has no schema_version (forkcheck writes \"1.x\")";
  if (std::string p = version_problem(report["schema_version"], "schema_version"); !p.empty())
    return p;
  // A folded run log always gets this forkcheck's version; its header says what wrote it.
  if (const json& v = member(member(report, "run"), "schema_version"); !v.is_null())
    if (std::string p = version_problem(v, "its run log's schema_version"); !p.empty()) return p;
  if (!report.contains("cases") || !report["cases"].is_array())
    return "not a forkcheck report: it has no list of cases";
  for (size_t i = 0; i < report["cases"].size(); ++i) {
    const json& c = report["cases"][i];
    if (!c.is_object() || field(c, "id").empty())
      return "not a forkcheck report: case " + std::to_string(i + 1) + " has no id";
  }
  return "";
}

std::string incomparable_reports(const Report& a, const Report& b) {
  const bool pa = is_program_report(a), pb = is_program_report(b);
  if (pa == pb) return "";
  auto what = [](bool program, const Report& r) {
    const std::string command = r.run.command.empty() ? "run" : r.run.command;
    return program ? "forkcheck " + command + " (your own program)"
                   : "forkcheck " + command + " (the catalog's cases)";
  };
  return "A is a report of " + what(pa, a) + ", B of " + what(pb, b) +
         ": compare two runs of the catalog, or two runs of a program";
}

ReportDiff diff_reports(const Report& a, const Report& b) {
  ReportDiff d;
  d.a = side_of(a);
  d.b = side_of(b);
  const bool program = is_program_report(a) && is_program_report(b);
  std::vector<CaseChange> all;
  std::set<std::string> seen;
  for (const auto& ca : a.cases) {
    seen.insert(ca.id);
    if (const Case* cb = case_to_compare(b, ca.id, program)) {
      compare_case(ca, *cb, program, all);
      seen.insert(cb->id);
    } else {
      all.push_back({"only-in-a", ca.id, "", "", ca.verdict, "", "", "", Effect::kCoverage,
                     "B has no case " + ca.id + " (not asked for, or not in its catalog)"});
    }
  }
  for (const auto& cb : b.cases)
    if (!seen.count(cb.id))
      all.push_back({"only-in-b", cb.id, "", "", "", cb.verdict, "", "", Effect::kCoverage,
                     "A has no case " + cb.id + " (not asked for, or not in its catalog)"});
  // The run as a whole: B not ok where A was, with no case above to say why (or the reverse). A
  // summary that does not say is unknown.
  const std::optional<bool> ok_a = a.summary.ok, ok_b = b.summary.ok;
  auto any = [&all](Effect e) {
    return std::any_of(all.begin(), all.end(), [e](const CaseChange& c) { return c.effect == e; });
  };
  // An interrupted run's "ok" is no pass: what it did not run cannot have failed there.
  if (ok_a == true && ok_b == false && !any(Effect::kRegression) && d.a.complete)
    all.push_back(
        {"summary", "", "", "", "ok", "not ok", "", "", Effect::kRegression, summary_why(b)});
  if (ok_a == false && ok_b == true && !any(Effect::kImprovement) && d.b.complete)
    all.push_back(
        {"summary", "", "", "", "not ok", "ok", "", "", Effect::kImprovement, summary_why(a)});

  // Grouped by case, the case with the worst change first; within a case its verdict first,
  // then its variants in catalog order (a stable sort keeps that order).
  std::map<std::string, int> worst;
  for (const auto& c : all) {
    auto it = worst.find(c.case_id);
    const int e = static_cast<int>(c.effect);
    if (it == worst.end() || e < it->second) worst[c.case_id] = e;
  }
  std::map<std::string, size_t> first_seen;
  for (size_t i = 0; i < all.size(); ++i) first_seen.emplace(all[i].case_id, i);
  std::stable_sort(all.begin(), all.end(), [&](const CaseChange& x, const CaseChange& y) {
    const int wx = worst[x.case_id], wy = worst[y.case_id];
    if (wx != wy) return wx < wy;
    return first_seen[x.case_id] < first_seen[y.case_id];
  });
  d.changes = std::move(all);
  d.regressed = d.count(Effect::kRegression) > 0;
  d.environment = diff_environment(a, b, d.changes);
  return d;
}

json diff_to_json(const ReportDiff& d, const std::string& a_path, const std::string& b_path) {
  auto side = [](const ReportSide& s, const std::string& path) {
    return json{{"path", path},
                {"command", s.command},
                {"started_at", s.started_at},
                {"forkcheck_version", s.forkcheck_version},
                {"schema_version", s.schema_version},
                {"complete", s.complete}};
  };
  json changes = json::array();
  for (const auto& c : d.changes) {
    json j = {{"kind", c.kind}, {"case", c.case_id}, {"effect", effect_name(c.effect)},
              {"a", c.a},       {"b", c.b},          {"why", c.why}};
    if (!c.variant.empty()) j["variant"] = c.variant;
    if (!c.role.empty()) j["role"] = c.role;
    if (!c.expected_a.empty() || !c.expected_b.empty()) {
      j["expected_a"] = c.expected_a;
      j["expected_b"] = c.expected_b;
    }
    changes.push_back(std::move(j));
  }
  json env = json::array();
  for (const auto& e : d.environment)
    env.push_back({{"name", e.name}, {"a", e.a}, {"b", e.b}, {"may_explain", e.may_explain}});
  return {{"a", side(d.a, a_path)},
          {"b", side(d.b, b_path)},
          {"regressed", d.regressed},
          {"identical", d.identical()},
          {"counts",
           {{"regressions", d.count(Effect::kRegression)},
            {"changed", d.count(Effect::kChanged)},
            {"improvements", d.count(Effect::kImprovement)},
            {"coverage", d.count(Effect::kCoverage)},
            {"environment", d.environment.size()}}},
          {"changes", std::move(changes)},
          {"environment", std::move(env)}};
}

}  // namespace fc::reports
