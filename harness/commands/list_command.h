// `forkcheck list [--json]`: the cases, where each comes from, where it applies, each variant's
// expectation. Exit status kError (common/exit_status_codes.h) when a repro program could not
// list its cases.
// --json prints {"cases": [...], "errors": [...]}: each case as its repro program describes it
// (`forkcheck-repro --list`: id, title, mechanism, source, platforms, program, variants with
// name, start_method, role, expected, expected_why, env...), and what could not be listed.
#pragma once

namespace fc::harness {

int list_cases(bool as_json = false);

}  // namespace fc::harness
