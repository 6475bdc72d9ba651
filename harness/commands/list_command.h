// `forkcheck list [CASE...] [--json]`: the cases, where each comes from, where it applies, each
// variant's expectation; with case ids, a page for each: its source (with its address), what was
// reported, the mechanism, and every variant with what it does and why it is expected to end as
// it does here. Exit status kError (base/exit_status_codes.h) when a repro program could not
// list its cases; an unknown id is a usage error (UsageError).
// --json prints {"cases": [...], "errors": [...]}: each case as its repro program describes it
// (`forkcheck-repro --list`: id, title, mechanism, source, platforms, program, variants with
// name, start_method, role, expected, expected_why, env...), and what could not be listed.
#pragma once

#include <string>
#include <vector>

namespace fc::harness {

int list_cases(bool as_json = false, const std::vector<std::string>& case_ids = {});

}  // namespace fc::harness
