#include "core/case_registry.h"

#include <algorithm>
#include <filesystem>

#include <forkcheck/launch.h>
#include "core/startup_cost.h"

namespace fc {
namespace {

// Cases register from static initialisers in other translation units: build the list on first use.
std::vector<CaseDef (*)()>& makers() {
  static std::vector<CaseDef (*)()> m;
  return m;
}

}  // namespace

bool register_case(CaseDef (*make)()) {
  makers().push_back(make);
  return true;
}

namespace {
std::vector<ProgramFacts>& program_facts() {
  static std::vector<ProgramFacts> f;
  return f;
}
}  // namespace

bool register_program_facts(ProgramFacts add) {
  program_facts().push_back(add);
  return true;
}

const std::vector<CaseDef>& all_cases() {
  static const std::vector<CaseDef> cases = [] {
    std::vector<CaseDef> v;
    for (auto* make : makers()) v.push_back(make());
    std::sort(v.begin(), v.end(), [](const CaseDef& a, const CaseDef& b) { return a.id < b.id; });
    return v;
  }();
  return cases;
}

const CaseDef* find_case(const std::string& id) {
  for (const auto& c : all_cases())
    if (c.id == id) return &c;
  return nullptr;
}

nlohmann::json to_json(const VariantSpec& v) {
  nlohmann::json env = nlohmann::json::object();
  for (const auto& [k, val] : v.env) env[k] = val;
  nlohmann::json j = {{"name", v.name},
                      {"program", v.program},
                      {"env", env},
                      {"start_method", v.start_method},
                      {"role", to_string(v.role)},
                      {"expected", to_string(v.skip_reason.empty() ? v.expected : Outcome::kSkip)},
                      {"expected_why", v.skip_reason.empty() ? v.expected_why : v.skip_reason},
                      {"description", v.description},
                      {"skip_reason", v.skip_reason}};
  if (v.waits_s > 0) j["waits_s"] = v.waits_s;
  return j;
}

nlohmann::json catalog_json(const std::string& program) {
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& c : all_cases()) {
    nlohmann::json variants = nlohmann::json::array();
    for (auto v : c.variants()) {
      // Decided here for every case at once: a start method this platform lacks (Windows has no
      // fork(), so neither fork nor forkserver) skips every variant that uses it.
      if (auto m = launch::parse_start_method(v.start_method))
        if (const char* why = launch::unavailable_reason(*m)) v.skip(why);
      auto j = to_json(v);
      // A variant run by another program names it by file name; the harness needs its path.
      if (!v.program.empty())
        j["program"] = (std::filesystem::path(program).parent_path() / v.program).string();
      variants.push_back(std::move(j));
    }
    nlohmann::json source = {
        {"title", c.source_title}, {"author", c.source_author}, {"document", c.source_doc}};
    if (!c.source_url.empty()) source["url"] = c.source_url;
    nlohmann::json explains = nlohmann::json::array();
    for (const auto& m : c.explains) explains.push_back({{"pattern", m.pattern}, {"fix", m.fix}});
    cases.push_back({{"id", c.id},
                     {"title", c.title},
                     {"source", source},
                     {"reported", c.reported},
                     {"mechanism", c.mechanism},
                     {"platforms", c.platforms},
                     {"program", program},
                     // What starting this program costs (core/startup_cost.h): the harness
                     // starts the variants of the costliest program first.
                     {"program_libraries", startup_libraries()},
                     {"variants", variants},
                     {"explains", explains},
                     {"environment_topics", c.environment_topics},
                     {"featured", c.featured},
                     {"shows_as", c.shows_as}});
  }
  nlohmann::json facts = nlohmann::json::object();
  for (auto* add : program_facts()) add(facts);
  return {{"cases", cases}, {"program_facts", facts}};
}

}  // namespace fc
