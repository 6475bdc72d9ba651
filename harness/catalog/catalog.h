// The catalog of cases, as the repro programs describe themselves (`PROGRAM --list`). Listing
// runs in a child like everything else: the harness never loads libtorch or OpenMP.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fc::harness {

struct Catalog {
  nlohmann::json cases =
      nlohmann::json::array();                  // each: id, title, source, ..., program, variants
  std::vector<std::string> errors;              // programs that could not list themselves
  std::map<std::string, std::string> left_out;  // case id -> why its entry was refused (in errors)
  // Seconds each program took to start and list itself: what loading it costs (libtorch's
  // static initialisation, above all), so what each of its exec'd workers will cost again.
  std::map<std::string, double> load_s;
  // The libtorch the torch cases run against, as the torch program says: {"version", "library"
  // (the real path of its libtorch_cpu)}; null without a torch program.
  nlohmann::json libtorch;
};

// The repro programs: in $FORKCHECK_REPRO_DIR, beside this executable (build tree), or in
// <bin>/../libexec/forkcheck (installed): install_layout.h. The native one, then the torch one
// where this build made it (version.h: kTorchProgramBuilt) or, in a package without it, where it
// was built here from the package's kit (harness/torch/torch_kit.h).
std::vector<std::string> repro_programs();

// The native one alone, found without looking for a torch program (a user's program's
// environment and `bench` need no more).
std::string native_repro_program();

// Why a case a repro program listed cannot be used as it is, in one line naming the field
// ("variant 2: \"role\" is a number (3), not a string"); "" when it can. Only the fields forkcheck
// and its reports read are checked; others are carried as they are.
std::string catalog_case_problem(const nlohmann::json& c);

// Each program lists its cases (`--list`), in a copy forked by its zygote when `zygotes` is given.
// A program whose output is no catalog, and each case of it that catalog_case_problem() refuses,
// is left out and named in `errors` (the run goes on without them, and is not ok).
Catalog load_catalog(const std::vector<std::string>& programs, class Zygotes* zygotes = nullptr);

// load_catalog(repro_programs()), each program that could not list its cases named on stderr.
Catalog load_catalog_reporting_errors(class Zygotes* zygotes = nullptr);

// Throws std::runtime_error (forkcheck's own failure, not the user's: exit status 1) when one of
// `ids` names a case whose catalog entry was refused (load_catalog_reporting_errors said why); an
// id that no program listed is left to the caller (a usage error).
void check_not_left_out(const Catalog& cat, const std::vector<std::string>& ids);

}  // namespace fc::harness
