// `forkcheck list`: the cases, where each comes from, where it applies, each variant's
// expectation. Exit status 1 when a repro program could not list its cases.
#pragma once

namespace fc::harness {

int list_cases();

}  // namespace fc::harness
