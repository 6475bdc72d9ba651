// The environment fingerprint. The catalog's comes from a child, never from forkcheck itself:
// the harness links neither libtorch nor OpenMP, so it asks a repro program (`--env`) what it
// loads: first forkcheck-repro-torch, which loads what the torch cases load; if that fails,
// forkcheck-repro, and the result says so. A user's program's comes from forkcheck and the
// program's own Python side.
//
// For a bug ticket (`forkcheck env`) there is more: the Python side (python_facts/python_probe.h),
// what forkcheck measures of the machine itself, and the risks those facts show.
#pragma once

#include <nlohmann/json.hpp>

#include "harness/python_facts/python_probe.h"

namespace fc::harness {

// Never throws: when no program can answer, the result holds "error" saying why.
// From the torch repro program (else the native one), in a child; `zygotes` may serve it.
nlohmann::json collect_environment(double timeout_s = 60, class Zygotes* zygotes = nullptr);

// A user's own program's (exec, watch, matrix, attach): the machine's facts as forkcheck itself
// reads them (launch/host_facts.h), no program started. What the program loads is its own
// Python side's to say; a repro program's libraries would describe the repro program.
nlohmann::json user_program_environment();

// What forkcheck measures of the machine and of how it was started, in its own process (no
// child): platform/host.h's machine_limits() ("dev_shm", "open_files", "cpus"), with
// "open_files"."soft" as forkcheck was started (it raises its own; its children get this one),
// and "variables": every OMP_*, MKL_*, KMP_* and GOMP_* variable set, name to value.
nlohmann::json measure_machine();

struct TicketEnvironmentOptions {
  PythonProbeOptions python;  // the interpreter asked, and its deadline
  double timeout_s = 60;      // the repro program's deadline (collect_environment)
};

// Everything `forkcheck env` reports, as one JSON object, for a ticket (`forkcheck env --json`
// prints it; an issue.md writer embeds it): collect_environment()'s fingerprint at the top level
// (os, libc, libtorch, openmp_runtimes, threads, cuda, ...; "error" when none could be had), and
//   "machine": measure_machine(),
//   "python":  probe_python(options.python) (its "status" and "error" say when there is no
//              Python, no torch, or the probe failed),
//   "risks":   reports::environment_risks() of the above: [{"id", "note", "why"}], only what
//              the measured facts show.
// Never throws but UsageError, for an interpreter the user named that cannot be run (checked
// before anything is started).
nlohmann::json ticket_environment(const TicketEnvironmentOptions& options = {});

}  // namespace fc::harness
