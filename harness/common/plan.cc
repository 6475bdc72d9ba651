#include "harness/common/plan.h"

#include "harness/common/did_you_mean.h"

#include <algorithm>
#include <tuple>

#include "harness/common/glob_match.h"
#include "harness/common/usage_error.h"

namespace fc::harness {
namespace {

bool matches(const std::string& pattern, const std::string& case_id, const std::string& variant) {
  if (pattern.empty()) return true;
  std::string glob =
      pattern.find_first_of("*?[") == std::string::npos ? "*" + pattern + "*" : pattern;
  const std::string full = case_id + "/" + variant;
  return glob_match(glob, full) || glob_match(glob, case_id);
}

}  // namespace

nlohmann::json plan_cases(const nlohmann::json& catalog_cases,
                          const std::vector<std::string>& case_ids, const std::string& only) {
  std::vector<std::string> ids;
  for (const auto& c : catalog_cases) ids.push_back(c.value("id", ""));
  for (const auto& id : case_ids) {
    if (std::find(ids.begin(), ids.end(), id) != ids.end()) continue;
    const std::string hint = did_you_mean(closest_names(id, ids));
    throw UsageError("unknown case '" + id + "'" + (hint.empty() ? "" : ": " + hint) +
                     " (forkcheck list shows the cases)");
  }
  nlohmann::json planned = nlohmann::json::array();
  for (const auto& c : catalog_cases) {
    const std::string id = c.value("id", "");
    if (!case_ids.empty() && std::find(case_ids.begin(), case_ids.end(), id) == case_ids.end())
      continue;
    nlohmann::json kept = c;
    kept["variants"] = nlohmann::json::array();
    nlohmann::json left_out = nlohmann::json::array();
    for (const auto& v : c["variants"]) {
      if (matches(only, id, v.value("name", "")))
        kept["variants"].push_back(v);
      else
        left_out.push_back({{"name", v.value("name", "")}, {"role", v.value("role", "")}});
    }
    // The verdict of a partial run says what was left out, and claims nothing of it.
    if (!left_out.empty()) kept["not_selected"] = left_out;
    if (!kept["variants"].empty()) planned.push_back(std::move(kept));
  }
  if (planned.empty()) throw UsageError("--only '" + only + "' selects no variant");
  return planned;
}

std::vector<size_t> start_order(const std::vector<nlohmann::json>& variants,
                                const std::vector<std::string>& programs,
                                const std::map<std::string, double>& load_s) {
  auto method_rank = [](const std::string& m) {
    return m == "spawn" ? 0 : m == "forkserver" ? 1 : 2;
  };
  auto key = [&](size_t i) {
    const auto load = load_s.find(programs.at(i));
    return std::make_tuple(variants.at(i).value("expected", "") != "hang",
                           -(load == load_s.end() ? 0.0 : load->second),
                           method_rank(variants.at(i).value("start_method", "")));
  };
  std::vector<size_t> order(variants.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
  return order;
}

}  // namespace fc::harness
