// The catalog of cases, as the repro programs describe themselves (`PROGRAM --list`). Listing
// runs in a child like everything else: the harness never loads libtorch or OpenMP.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fc::harness {

struct Catalog {
  nlohmann::json cases = nlohmann::json::array();  // each: id, title, source, ..., program, variants
  std::vector<std::string> errors;                 // programs that could not list themselves
  // Seconds each program took to start and list itself: what loading it costs (libtorch's
  // static initialisation, above all), so what each of its exec'd workers will cost again.
  std::map<std::string, double> load_s;
};

// The repro programs: in $FORKCHECK_REPRO_DIR, beside this executable (build tree), or in
// <bin>/../libexec/forkcheck (installed): install_layout.h.
std::vector<std::string> repro_programs();

// Each program lists its cases (`--list`), in a copy forked by its zygote when `zygotes` is given.
Catalog load_catalog(const std::vector<std::string>& programs, class Zygotes* zygotes = nullptr);

// load_catalog(repro_programs()), each program that could not list its cases named on stderr.
Catalog load_catalog_reporting_errors(class Zygotes* zygotes = nullptr);

}  // namespace fc::harness
