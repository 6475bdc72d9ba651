#include "harness/catalog/catalog.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <iostream>
#include <stdexcept>

#include "harness/base/json_shape.h"
#include "harness/platform/install_layout.h"
#include "harness/supervise/supervisor.h"
#include "harness/supervise/zygote.h"
#include "harness/torch/torch_kit.h"
#include "harness/version.h"
#include "reports/text.h"

namespace fc::harness {

namespace {

using J = JsonKind;

// One of `allowed`, when it is a string at all (member_problem says when it is not).
std::string one_of(const nlohmann::json& obj, const char* key,
                   std::initializer_list<const char*> allowed) {
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return "";
  std::string list;
  for (const char* a : allowed) {
    if (*it == a) return "";
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  return "\"" + std::string(key) + "\" is " + json_kind(*it) + ", not one of " + list;
}

std::string listed_variant_problem(const nlohmann::json& v) {
  if (!v.is_object()) return "is " + json_kind(v) + ", not an object";
  for (const auto& problem :
       {member_problem(v, "name", J::kNonEmptyString),
        member_problem(v, "start_method", J::kString),
        one_of(v, "start_method", {"fork", "spawn", "forkserver"}),
        member_problem(v, "role", J::kString), one_of(v, "role", {"hazard", "fix"}),
        member_problem(v, "expected", J::kString),
        one_of(v, "expected",
               {"ok", "error", "crash", "hang", "timeout", "protocol-error", "skip"}),
        member_problem(v, "expected_why", J::kString),
        member_problem(v, "description", J::kString, false),
        member_problem(v, "skip_reason", J::kString, false),
        member_problem(v, "program", J::kString, false),
        member_problem(v, "env", J::kObject, false)})
    if (!problem.empty()) return problem;
  if (v.contains("env"))
    for (const auto& [name, value] : v["env"].items())
      if (!value.is_string())
        return "\"env\" has " + name + " as " + json_kind(value) + ", not a string";
  return "";
}

}  // namespace

std::string catalog_case_problem(const nlohmann::json& c) {
  if (!c.is_object()) return "it is " + json_kind(c) + ", not an object";
  for (const auto& problem :
       {member_problem(c, "id", J::kNonEmptyString), member_problem(c, "title", J::kString),
        member_problem(c, "source", J::kObject), member_problem(c, "variants", J::kArray),
        member_problem(c, "reported", J::kString, false),
        member_problem(c, "mechanism", J::kString, false),
        member_problem(c, "platforms", J::kString, false),
        member_problem(c, "program", J::kString, false)})
    if (!problem.empty()) return problem;
  const nlohmann::json& source = c["source"];
  for (const char* key : {"title", "author", "document"})
    if (auto problem = member_problem(source, key, J::kString); !problem.empty())
      return "source: " + problem;
  if (auto problem = member_problem(source, "url", J::kString, false); !problem.empty())
    return "source: " + problem;
  if (c["variants"].empty()) return "\"variants\" is empty";
  for (std::size_t i = 0; i < c["variants"].size(); ++i)
    if (auto problem = listed_variant_problem(c["variants"][i]); !problem.empty())
      return "variant " + std::to_string(i + 1) + ": " + problem;
  return "";
}

std::string native_repro_program() {
  const PartLookup lookup = find_repro_dir();
  // Not found anywhere: the installed place, so that the error names where it should be.
  const std::filesystem::path dir = lookup.found.empty() ? lookup.looked.back() : lookup.found;
  return (dir / "forkcheck-repro").string();
}

std::vector<std::string> repro_programs() {
  const std::string native = native_repro_program();
  if (kTorchProgramBuilt)
    return {native,
            (std::filesystem::path(native).parent_path() / "forkcheck-repro-torch").string()};
  // A package's: the torch program built here from its kit, where one is (harness/torch/).
  if (const TorchCases& torch = torch_cases(); !torch.program.empty())
    return {native, torch.program};
  return {native};
}

Catalog load_catalog(const std::vector<std::string>& programs, Zygotes* zygotes) {
  Catalog cat;
  for (const auto& program : programs) {
    const auto t0 = std::chrono::steady_clock::now();
    LaunchSpec spec;
    spec.argv = {program, "--list"};
    if (zygotes) spec.zygote = zygotes->for_program(program);
    spec.timeout_s = 60;
    spec.channel = false;
    spec.capture_cap = 8u << 20;
    ChildResult r = supervise(spec);
    cat.load_s[program] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Interrupted (Ctrl-C): no program is at fault, and the run ends without its catalog.
    if (r.interrupted_by != 0) break;
    if (!r.started || !r.exit.exited_ok() || r.out.truncated()) {
      cat.errors.push_back(
          program + " --list: " +
          (r.started ? r.exit.describe() + " " + r.err.last_lines(2) : r.start_error));
      continue;
    }
    auto j = nlohmann::json::parse(r.out.text(), nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("cases")) {
      cat.errors.push_back(program + " --list: its output is not a catalog");
      continue;
    }
    if (!j["cases"].is_array()) {
      cat.errors.push_back(program + " --list: its output is not a catalog: \"cases\" is " +
                           json_kind(j["cases"]) + ", not an array");
      continue;
    }
    // The program's own facts: which libtorch its torch cases run against (an object or nothing).
    if (j.contains("program_facts") && j["program_facts"].is_object() &&
        j["program_facts"].contains("libtorch") && j["program_facts"]["libtorch"].is_object())
      cat.libtorch = j["program_facts"]["libtorch"];
    // Each case checked before anything reads it: one that is not as forkcheck reads it is left
    // out, named, and the run goes on with the others.
    for (std::size_t i = 0; i < j["cases"].size(); ++i) {
      nlohmann::json& c = j["cases"][i];
      if (const std::string problem = catalog_case_problem(c); !problem.empty()) {
        const bool named = c.is_object() && c.contains("id") && c["id"].is_string();
        const std::string error = program + " --list: case " + std::to_string(i + 1) +
                                  (named ? " (" + c["id"].get<std::string>() + ")" : "") + ": " +
                                  problem + "; left out";
        cat.errors.push_back(error);
        if (named) cat.left_out[c["id"].get<std::string>()] = error;
        continue;
      }
      cat.cases.push_back(std::move(c));
    }
  }
  return cat;
}

void check_not_left_out(const Catalog& cat, const std::vector<std::string>& ids) {
  for (const auto& id : ids)
    if (const auto it = cat.left_out.find(id); it != cat.left_out.end())
      throw std::runtime_error("cannot run " + id +
                               ": its repro program's catalog entry was left out (said above)");
}

Catalog load_catalog_reporting_errors(Zygotes* zygotes) {
  Catalog cat = load_catalog(repro_programs(), zygotes);
  // An error may quote a repro program's stderr: shown with its control bytes escaped.
  for (const auto& e : cat.errors) std::cerr << "forkcheck: " << reports::terminal_safe(e) << "\n";
  return cat;
}

}  // namespace fc::harness
