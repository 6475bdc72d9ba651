#include "harness/catalog/known_messages.h"

#include "reports/text.h"

namespace fc::harness {

nlohmann::json explain_messages(const nlohmann::json& catalog_cases, const std::string& said) {
  nlohmann::json found = nlohmann::json::array();
  if (!catalog_cases.is_array() || said.empty()) return found;
  // White space as one space: Python wraps long messages over lines ("before the\n        current
  // process has finished its bootstrapping phase"), and a pattern is one line.
  const std::string text = reports::one_line(said);
  for (const auto& c : catalog_cases) {
    if (!c.is_object() || !c.contains("explains") || !c["explains"].is_array()) continue;
    for (const auto& m : c["explains"]) {
      if (!m.is_object() || !m.contains("pattern") || !m["pattern"].is_string()) continue;
      const std::string pattern = m["pattern"].get<std::string>();
      if (pattern.empty() || text.find(reports::one_line(pattern)) == std::string::npos) continue;
      found.push_back({{"case", c.value("id", "")},
                       {"title", c.value("title", "")},
                       {"pattern", pattern},
                       {"fix", m.value("fix", "")}});
      break;  // one per case: its first pattern that matched
    }
  }
  return found;
}

std::string case_showing(const nlohmann::json& catalog_cases, const std::string& sign) {
  if (!catalog_cases.is_array()) return "";
  for (const auto& c : catalog_cases) {
    if (!c.is_object() || !c.contains("shows_as") || !c["shows_as"].is_array()) continue;
    for (const auto& s : c["shows_as"])
      if (s.is_string() && s.get<std::string>() == sign && c.contains("id") && c["id"].is_string())
        return c["id"].get<std::string>();
  }
  return "";
}

void name_risk_cases(nlohmann::json& risks, const nlohmann::json& catalog_cases) {
  if (!risks.is_array()) return;
  for (auto& r : risks) {
    if (!r.is_object() || !r.contains("id") || !r["id"].is_string()) continue;
    if (auto id = case_showing(catalog_cases, "risk:" + r["id"].get<std::string>()); !id.empty())
      r["case"] = id;
  }
}

std::string failure_text(const std::string& stderr_text, const nlohmann::json& python,
                         const std::string& how_it_ended) {
  std::string text = stderr_text + "\n" + how_it_ended + "\n";
  if (!python.is_object() || !python.contains("processes") || !python["processes"].is_array())
    return text;
  for (const auto& p : python["processes"]) {
    if (!p.is_object()) continue;
    if (p.contains("exceptions") && p["exceptions"].is_array())
      for (const auto& e : p["exceptions"])
        if (e.is_object()) text += e.value("type", "") + ": " + e.value("message", "") + "\n";
    if (p.contains("crash") && p["crash"].is_object())
      text += "Fatal Python error: " + p["crash"].value("fatal", "") + "\n";
  }
  return text;
}

}  // namespace fc::harness
