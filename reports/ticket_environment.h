// What a bug ticket asks of the environment beyond the fingerprint (`forkcheck env`, and any
// report that embeds it): the Python side, what forkcheck measured of the machine, and the risks
// those facts show, as rows for a person and as notes. Everything here reads the environment
// object (harness/session/environment_probe.h's ticket_environment()) and nothing else, so a saved
// one renders the same.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/model/report_model.h"
#include "reports/report_view.h"

namespace fc::reports {

// The thresholds of the risk notes.
// DataLoader workers hand batches over in /dev/shm: Docker's default of 64 MiB is far too small.
inline constexpr std::uint64_t kSmallShmBytes = std::uint64_t{1} << 30;
// torch's file_descriptor sharing strategy holds a descriptor per shared tensor.
inline constexpr std::uint64_t kLowOpenFiles = 4096;

// The risks the measured facts show, each {"id", "note" (the fact, one line), "why" (what it
// does to a multiprocessing torch program and the way out, one line)}. Only what was measured:
// a fact that is absent raises no note. Ids:
//   dev-shm-small      /dev/shm smaller than kSmallShmBytes
//   dev-shm-full       /dev/shm with less than kSmallShmBytes free
//   dev-shm-absent     no /dev/shm on Linux
//   open-files-low     the soft open-files limit under kLowOpenFiles (unless torch's sharing
//                      strategy was measured as file_system)
//   threads-over-cpus  OMP_NUM_THREADS, MKL_NUM_THREADS or torch's intra-op threads above the
//                      CPUs in the affinity mask
//   threads-over-quota the same above the cgroup's CPU quota (when under the mask)
//   fork-with-cuda     multiprocessing's default start method is fork and torch sees CUDA
//   fork-with-openmp   the default is fork and torch runs parallel ops on libgomp, 2+ threads
// A risk may carry "case": the catalog's case whose failure it risks (its `shows_as` names
// "risk:ID"), set by the harness where it has the catalog at hand
// (harness/catalog/known_messages.h); risk_why() shows it as the case's page.
nlohmann::json environment_risks(const Environment& env);

// A risk's why, with the page of its catalog case when the risk carries one.
std::string risk_why(const EnvRisk& risk);

// env["python"] as rows: Python, torch, torch threads, torch CUDA, numpy, start method, hint.
std::vector<EnvRow> python_rows(const Environment& env);

// env["machine"] as rows: /dev/shm, open files, CPUs, and the thread and fork variables (those
// forkcheck saw, merged with the fingerprint's "variables").
std::vector<EnvRow> machine_rows(const Environment& env);

// "64 MiB", "23.5 GiB".
std::string format_bytes(double bytes);

}  // namespace fc::reports
