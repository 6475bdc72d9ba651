// What forkcheck may do to a tree by whose it is (policy; the OS parts do it). A tree it started
// is its own: stopped with it (Ctrl-Z), and whatever of it outlives the child is ended. A tree it
// attached to (forkcheck attach) is the user's: never stopped with forkcheck, and at the end of
// the watch left exactly as it was, unless forkcheck itself ended it (watchdog.h's
// ends_attached_tree: a proven hang, with --kill-on-hang).
#pragma once

#include "harness/supervise/supervisor.h"

namespace fc::harness {

// Ctrl-Z: whether a job's tree is stopped with forkcheck. Not a tree forkcheck attached to, nor a
// debugger of one (it holds that process stopped while it is stopped itself).
inline bool stops_with_forkcheck(bool attached, bool debugger_of_attached) {
  return !attached && !debugger_of_attached;
}

// At the end of a job: whether its tree is left as it is (what of it is alive is said, nothing
// is signalled) rather than ended.
inline bool left_as_it_is(bool attached, const ChildResult& r) {
  return attached && !r.sent_sigterm && !r.sent_sigkill;
}

}  // namespace fc::harness
