// One registry for the cases. A case is one file under repros/cases/ that calls FORKCHECK_CASE;
// the repro programs list the registry (--list) and run one variant of one case (--run).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/outcome.h"

namespace fc {

struct VariantSpec {
  std::string name;
  std::string start_method;  // fork | spawn | forkserver | none
  Role role = Role::kFix;
  Outcome expected = Outcome::kOk;
  std::string expected_why;  // why that expectation holds on this platform (decided before running)
  std::string description;   // what this variant does differently
  std::string skip_reason;   // set: the variant cannot apply here and is not run (expected = skip)
};

// What the case's main process observed; the harness adds what only it can see (signals, hangs).
struct CaseResult {
  Outcome outcome = Outcome::kOk;
  std::string message;
  nlohmann::json details = nlohmann::json::object();
};

struct CaseDef {
  std::string id;
  std::string title;
  std::string source_title;   // the account the case comes from
  std::string source_author;
  std::string source_doc;     // which seed document
  std::string reported;       // what the source reported, in a sentence or two
  std::string mechanism;      // why it happens
  std::string platforms;      // where the hazard applies
  std::vector<VariantSpec> (*variants)() = nullptr;  // computed for this platform at --list time
  CaseResult (*run)(const VariantSpec& variant) = nullptr;
};

bool register_case(CaseDef (*make)());
const std::vector<CaseDef>& all_cases();
const CaseDef* find_case(const std::string& id);

nlohmann::json to_json(const VariantSpec& v);
nlohmann::json catalog_json(const std::string& program);

#define FC_CASE_CONCAT_(a, b) a##b
#define FC_CASE_CONCAT(a, b) FC_CASE_CONCAT_(a, b)
// FORKCHECK_CASE(make_my_case) { return CaseDef{...}; }
#define FORKCHECK_CASE(ident)                                                                   \
  static ::fc::CaseDef ident();                                                                 \
  [[maybe_unused]] static const bool FC_CASE_CONCAT(fc_case_registered_, ident) =               \
      ::fc::register_case(&ident);                                                              \
  static ::fc::CaseDef ident()

}  // namespace fc
