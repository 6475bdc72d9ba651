#include "harness/commands/list_command.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>

#include <sstream>
#include <string>

#include "harness/base/did_you_mean.h"
#include "harness/base/exit_status_codes.h"
#include "harness/base/usage_error.h"
#include "harness/catalog/catalog.h"
#include "harness/python_facts/python_torch.h"
#include "harness/torch/torch_kit.h"
#include "harness/version.h"
#include "reports/model/report_model_json.h"
#include "reports/text.h"
#include "reports/torch_cases.h"
#include "reports/whose_torch.h"

namespace fc::harness {

namespace {

// `text` in lines of at most `width` columns (counted in bytes: the texts are mostly ASCII),
// each after `indent` spaces.
std::string wrapped(const std::string& text, std::size_t indent, std::size_t width = 100) {
  std::string out, line;
  std::istringstream words(text);
  for (std::string w; words >> w;) {
    if (!line.empty() && indent + line.size() + 1 + w.size() > width) {
      out += std::string(indent, ' ') + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + w;
  }
  if (!line.empty()) out += std::string(indent, ' ') + line + "\n";
  return out;
}

std::string shown(const nlohmann::json& c, const char* key) {
  return c.contains(key) && c[key].is_string() ? reports::terminal_safe(c[key].get<std::string>())
                                               : "";
}

void print_page(const nlohmann::json& c) {
  const nlohmann::json& s = c.value("source", nlohmann::json::object());
  std::string page = shown(c, "id") + ": " + shown(c, "title") + "\n\n";
  std::string source = "\u201c" + shown(s, "title") + "\u201d by " + shown(s, "author");
  if (!shown(s, "document").empty()) source += " (document " + shown(s, "document") + ")";
  if (!shown(s, "url").empty()) source += " " + shown(s, "url");
  page += "source\n" + wrapped(source, 2) + "applies to\n" + wrapped(shown(c, "platforms"), 2);
  page += "what was reported\n" + wrapped(shown(c, "reported"), 2);
  page += "why it happens\n" + wrapped(shown(c, "mechanism"), 2) + "variants\n";
  for (const auto& v : c.value("variants", nlohmann::json::array())) {
    page += "  " + shown(v, "name") + " (" + shown(v, "start_method") + ", " + shown(v, "role") +
            "): expects " + shown(v, "expected") + "\n";
    page += wrapped("does: " + shown(v, "description"), 6);
    page += wrapped((shown(v, "expected") == "skip" ? "not run here: " + shown(v, "skip_reason")
                                                    : "why: " + shown(v, "expected_why")),
                    6);
  }
  page += "run it\n  forkcheck run " + shown(c, "id") + "\n";
  std::fputs(page.c_str(), stdout);
}

}  // namespace

int list_cases(bool as_json, const std::vector<std::string>& case_ids) {
  Catalog cat = load_catalog_reporting_errors();
  check_not_left_out(cat, case_ids);
  if (!case_ids.empty()) {
    std::vector<std::string> known;
    for (const auto& c : cat.cases) known.push_back(c.value("id", ""));
    nlohmann::json chosen = nlohmann::json::array();
    for (const auto& id : case_ids) {
      const auto it = std::find(known.begin(), known.end(), id);
      if (it == known.end() && !kTorchProgramBuilt) {
        // A torch case of this package that is not built here: why, rather than "unknown".
        const nlohmann::json& kit = torch_cases().facts.value("cases", nlohmann::json::array());
        if (std::find(kit.begin(), kit.end(), id) != kit.end()) {
          std::fprintf(stderr, "forkcheck: %s is a torch case: %s\n", id.c_str(),
                       reports::torch_cases_sentence(
                           reports::read_as<reports::TorchCases>(torch_cases().facts))
                           .c_str());
          return exit_status::kError;
        }
      }
      if (it == known.end()) {
        const std::string hint = did_you_mean(closest_names(id, known));
        throw UsageError("unknown case '" + id + "'" + (hint.empty() ? "" : ": " + hint) +
                         " (forkcheck list shows the cases)");
      }
      chosen.push_back(cat.cases[static_cast<std::size_t>(it - known.begin())]);
    }
    if (as_json) {
      std::cout << nlohmann::json{{"cases", chosen}, {"errors", cat.errors}}.dump(
                       2, ' ', false, nlohmann::json::error_handler_t::replace)
                << "\n";
    } else {
      for (std::size_t i = 0; i < chosen.size(); ++i) {
        if (i > 0) std::fputs("\n", stdout);
        print_page(chosen[i]);
      }
    }
    return cat.errors.empty() ? exit_status::kOk : exit_status::kError;
  }
  // Whose torch: the libtorch the torch cases run against, and the Python torch found beside it.
  const nlohmann::json python_torch = find_python_torch();
  if (as_json) {
    nlohmann::json out = {{"cases", cat.cases},
                          {"errors", cat.errors},
                          {"libtorch", cat.libtorch},
                          {"python_torch", python_torch}};
    if (!kTorchProgramBuilt) out["torch_cases"] = torch_cases().facts;
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return cat.errors.empty() ? exit_status::kOk : exit_status::kError;
  }
  // Columns as wide as their longest entry (variant names run to 28 characters).
  int id_w = 22, name_w = 4, method_w = 4;
  for (const auto& c : cat.cases) {
    id_w = std::max(id_w, static_cast<int>(c.value("id", "").size()));
    for (const auto& v : c["variants"]) {
      name_w = std::max(name_w, static_cast<int>(v.value("name", "").size()));
      method_w = std::max(method_w, static_cast<int>(v.value("start_method", "").size()));
    }
  }
  for (const auto& c : cat.cases) {
    std::printf("%-*s %s\n", id_w, c.value("id", "").c_str(), c.value("title", "").c_str());
    // A seed document by its number; a public report by its address.
    const std::string doc = c["source"].value("document", "");
    const std::string where = doc.empty() ? c["source"].value("url", "") : doc;
    std::printf("%-*s source %s: %s (%s); applies to: %s\n", id_w, "", where.c_str(),
                c["source"].value("title", "").c_str(), c["source"].value("author", "").c_str(),
                c.value("platforms", "").c_str());
    for (const auto& v : c["variants"])
      std::printf("%-*s   %-*s %-*s %-6s expects %s\n", id_w, "", name_w,
                  v.value("name", "").c_str(), method_w, v.value("start_method", "").c_str(),
                  v.value("role", "").c_str(), v.value("expected", "").c_str());
  }
  const std::string kit = kTorchProgramBuilt
                              ? ""
                              : reports::torch_cases_sentence(
                                    reports::read_as<reports::TorchCases>(torch_cases().facts));
  std::printf("\nwhose torch\n");
  if (!kit.empty()) std::printf("  torch cases: %s\n", reports::terminal_safe(kit).c_str());
  // The torch program's own facts (program_facts.libtorch), and the Python torch beside them.
  std::optional<reports::CatalogLibtorch> libtorch;
  if (cat.libtorch.is_object()) libtorch = reports::read_as<reports::CatalogLibtorch>(cat.libtorch);
  if (libtorch)
    std::printf("  libtorch: %s\n",
                (reports::libtorch_text(*libtorch) +
                 (kTorchProgramBuilt ? ": the torch cases run against it (the one "
                                       "forkcheck was built with)"
                                     : ": the torch cases run against it"))
                    .c_str());
  else if (kit.empty())
    std::printf("  libtorch: %s\n", reports::kNoTorchProgram);
  if (const std::string p = reports::python_torch_sentence(
          libtorch, reports::read_as<reports::EnvPythonTorch>(python_torch));
      !p.empty())
    std::printf("  Python: %s\n", reports::terminal_safe(p).c_str());
  return cat.errors.empty() ? exit_status::kOk : exit_status::kError;
}

}  // namespace fc::harness
