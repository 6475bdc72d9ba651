// A case's verdict from its variants' expectations and outcomes:
//   skipped         every variant was skipped (each says why)
//   regression      a fix variant did not come out as expected (the fixed behaviour broke)
//   reproduced      every hazard variant came out as documented, at least one of them failing
//   not-reproduced  a hazard variant did not fail as documented, or none is expected to fail here
//                   (a timeout is not a hang: a hazard expected to hang that timed out was still
//                   working when it was stopped, and did not reproduce)
//   ok | failed     for `forkcheck exec` and `watch`, whose one variant (role "subject") is the
//                   user's program: failed when it did not end ok, or (watch) when it made a
//                   hazardous fork of a kind not allowed (reports/watch_view.h); skipped when
//                   forkcheck was interrupted before it ended
// A variant the run did not see to its end (not run, or not finished: report_view.h's
// unfinished()) is a skip: never a regression, a failure, nor a sign of the hazard.
#pragma once

#include <string>

#include <vector>

#include "reports/model/report_model.h"

namespace fc::reports {

struct Verdict {
  std::string verdict;
  std::string reason;
};

// `variants`: a case's variants (role, expected, outcome). `not_selected`: the case's
// variants the run left out ({name, role}): the reason then says the run was partial, and a run
// that selected no hazard variant is `partial`, never reproduced or not; so is one whose hazard
// variants that might have failed were not seen to their end (forkcheck was interrupted).
Verdict case_verdict(const std::vector<Variant>& variants,
                     const std::vector<NotSelected>& not_selected = {});

}  // namespace fc::reports
