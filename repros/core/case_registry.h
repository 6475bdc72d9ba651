// One registry for the cases. A case is one file under repros/cases/ that calls FORKCHECK_CASE;
// the repro programs list the registry (--list) and run one variant of one case (--run).
#pragma once

#include <functional>
#include <string>
#include <utility>
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
  // Another repro program (a file name beside this one) runs this variant, e.g. the same case
  // linked against another OpenMP runtime; empty: this program.
  std::string program;
  // Set in the variant's environment before its process starts (some runtimes read theirs only
  // at start-up, e.g. KMP_INIT_AT_FORK, OBJC_DISABLE_INITIALIZE_FORK_SAFETY).
  std::vector<std::pair<std::string, std::string>> env;
  // Seconds the variant spends waiting by design, using no CPU (a grace period it must let pass):
  // the harness starts such a variant early, so that its wait passes beside other variants' work.
  double waits_s = 0;

  VariantSpec& run_by(std::string p) {
    program = std::move(p);
    return *this;
  }
  VariantSpec& with_env(std::string k, std::string v) {
    env.emplace_back(std::move(k), std::move(v));
    return *this;
  }
  VariantSpec& waits(double seconds) {
    waits_s = seconds;
    return *this;
  }
  VariantSpec& skip(std::string reason) {
    skip_reason = std::move(reason);
    return *this;
  }
};

// A variant that shows the documented failure (or, with `expected` ok, says why it cannot here).
inline VariantSpec hazard(std::string name, std::string start_method, Outcome expected,
                          std::string why, std::string description) {
  VariantSpec v;
  v.name = std::move(name);
  v.start_method = std::move(start_method);
  v.role = Role::kHazard;
  v.expected = expected;
  v.expected_why = std::move(why);
  v.description = std::move(description);
  return v;
}

// A variant that shows the fixed behaviour: it must be `ok`.
inline VariantSpec fix(std::string name, std::string start_method, std::string why,
                       std::string description) {
  VariantSpec v = hazard(std::move(name), std::move(start_method), Outcome::kOk, std::move(why),
                         std::move(description));
  v.role = Role::kFix;
  return v;
}

// A case whose every variant needs what this platform lacks: each is skipped with `why` (nothing
// changes when `why` is empty or null: the case runs).
inline std::vector<VariantSpec> skip_all(std::vector<VariantSpec> variants,
                                         const std::string& why) {
  if (!why.empty())
    for (auto& v : variants) v.skip(why);
  return variants;
}
inline std::vector<VariantSpec> skip_all(std::vector<VariantSpec> variants, const char* why) {
  return skip_all(std::move(variants), std::string(why ? why : ""));
}

// What the case's main process observed; the harness adds what only it can see (signals, hangs).
struct CaseResult {
  Outcome outcome = Outcome::kOk;
  std::string message;
  nlohmann::json details = nlohmann::json::object();
};

// An error message a case explains: a program whose error output, exception or crash says
// `pattern` (a plain substring) is seeing this case's failure, and `fix` is what to do about it.
// `forkcheck exec` matches a failed program's messages against every case's (harness/catalog/
// known_messages.h) and names the case, whose page (`forkcheck list CASE`) shows it.
struct KnownMessage {
  std::string pattern;
  std::string fix;
};

struct CaseDef {
  std::string id;
  std::string title;
  std::string source_title;  // the account the case comes from
  std::string source_author;
  std::string source_doc;  // which seed document ("" for a case from a public report)
  std::string source_url;  // where the report can be read, when it is public (an issue, a post)
  std::string reported;    // what the source reported, in a sentence or two
  std::string mechanism;   // why it happens
  std::string platforms;   // where the hazard applies
  std::vector<VariantSpec> (*variants)() = nullptr;  // computed for this platform at --list time
  CaseResult (*run)(const VariantSpec& variant) = nullptr;
  std::vector<KnownMessage> explains;  // the error messages this case's failure shows as
  // The environment facts that may explain a change of this case's outcome between two runs
  // (forkcheck diff): topics of reports/environment_diff.cc (openmp, cpus, shm, libtorch, ...).
  std::vector<std::string> environment_topics;
  // The case the reports lead with (its workers' loss curves): one in the catalog.
  bool featured = false;
  // What this case's failure shows as besides its messages, so that forkcheck can point a user's
  // program that shows it to this case: a stuck process's wait ("stuck:pause", "stuck:lock",
  // "stuck:locks": reports/finding.h stuck_kind) or an environment risk ("risk:fork-with-openmp":
  // reports/ticket_environment.h environment_risks).
  std::vector<std::string> shows_as;
};

bool register_case(CaseDef (*make)());

// Facts about the program itself that its catalog carries beside the cases ("program_facts"): the
// torch program says which libtorch it runs against (forkcheck list shows it). Registered at
// static-initialisation time, like cases.
using ProgramFacts = void (*)(nlohmann::json& facts);
bool register_program_facts(ProgramFacts add);
const std::vector<CaseDef>& all_cases();
const CaseDef* find_case(const std::string& id);

nlohmann::json to_json(const VariantSpec& v);
nlohmann::json catalog_json(const std::string& program);

#define FC_CASE_CONCAT_(a, b) a##b
#define FC_CASE_CONCAT(a, b) FC_CASE_CONCAT_(a, b)
// FORKCHECK_CASE(make_my_case) { return CaseDef{...}; }
#define FORKCHECK_CASE(ident)                                                     \
  static ::fc::CaseDef ident();                                                   \
  [[maybe_unused]] static const bool FC_CASE_CONCAT(fc_case_registered_, ident) = \
      ::fc::register_case(&ident);                                                \
  static ::fc::CaseDef ident()

}  // namespace fc
