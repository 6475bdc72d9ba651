#include "harness/catalog/plan.h"

#include "harness/base/did_you_mean.h"

#include <algorithm>
#include <tuple>

#include "harness/base/glob_match.h"
#include "harness/base/usage_error.h"

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
  auto load = [&](size_t i) {
    const auto l = load_s.find(programs.at(i));
    return l == load_s.end() ? 0.0 : l->second;
  };
  double heaviest = 0;
  for (size_t i = 0; i < variants.size(); ++i) heaviest = std::max(heaviest, load(i));
  auto waits = [&](size_t i) {
    const nlohmann::json& w = variants.at(i).value("waits_s", nlohmann::json(0.0));
    return w.is_number() ? w.get<double>() : 0.0;
  };
  auto key = [&](size_t i) {
    return std::make_tuple(-load(i), method_rank(variants.at(i).value("start_method", "")));
  };
  auto by_cost = [&](size_t a, size_t b) { return key(a) < key(b); };
  std::vector<size_t> heavy, light, hangs, sleepers;
  for (size_t i = 0; i < variants.size(); ++i) {
    if (variants[i].value("expected", "") == "hang")
      hangs.push_back(i);
    else if (waits(i) > 0)
      sleepers.push_back(i);
    else if (heaviest > 0 && load(i) >= heaviest / 2)
      heavy.push_back(i);
    else
      light.push_back(i);
  }
  for (auto* list : {&heavy, &light, &hangs}) std::stable_sort(list->begin(), list->end(), by_cost);
  std::stable_sort(sleepers.begin(), sleepers.end(),
                   [&](size_t a, size_t b) { return waits(a) > waits(b); });
  // The heavy ones that spawn first (each of their workers pays the start-up again); then the
  // rest of the heavy ones with the light ones spread evenly between them, so that the short
  // ones run beside longer ones and no queue of them, each paying the supervisor's start and
  // end, is left for the end.
  std::vector<size_t> working, rest;
  for (size_t i : heavy)
    (variants[i].value("start_method", "") == "spawn" ? working : rest).push_back(i);
  for (size_t h = 0, l = 0; h < rest.size() || l < light.size();) {
    const bool take_heavy =
        l == light.size() || (h < rest.size() && h * light.size() <= l * rest.size());
    working.push_back(take_heavy ? rest[h++] : light[l++]);
  }
  // Those that mostly wait (expected hangs, parked until the watchdog calls time; variants that
  // wait by design), once two working ones started, one after each working one: they start early,
  // their waits beside the others' work, yet never hold most of the slots while the machine
  // idles (a hang holds one until it parks, half a second after its step, and counts against
  // the limit of running variants until it is ended).
  std::vector<size_t> waiting = hangs;
  waiting.insert(waiting.end(), sleepers.begin(), sleepers.end());
  std::vector<size_t> order;
  for (size_t w = 0, o = 0; w < waiting.size() || o < working.size();) {
    if (o < working.size()) order.push_back(working[o++]);
    if ((o >= 2 || o == working.size()) && w < waiting.size()) order.push_back(waiting[w++]);
  }
  return order;
}

}  // namespace fc::harness
