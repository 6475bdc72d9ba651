// objc-initialize-fork (source 000, macOS): the Objective-C runtime refuses to run a class's own
// +initialize in the child of a multi-threaded fork, since it may have been in progress in another
// thread when fork() was called, and crashes the child with a message instead. This is the real
// runtime hazard, built with the plain runtime API (no Foundation, no MPS): a class with its own
// +initialize, one extra thread alive at fork, the child's first message to the class.
//
// Only Apple platforms have that runtime (the probe: objc_probe_mac.cc); elsewhere the variants
// are skipped (objc_probe_other.cc) and static-init-fork shows the same hazard (one-time
// initialisation interrupted by fork) in C++.
#include "cases/support/objc_probe.h"
#include "core/case_registry.h"

namespace {
namespace objc_initialize_fork {

using fc::Outcome;

std::vector<fc::VariantSpec> variants() {
  std::vector<fc::VariantSpec> v = {
      fc::hazard("fork", "fork", Outcome::kCrash,
                 "the runtime's atfork child handler marks a child of a multi-threaded parent; "
                 "there, a class with its own +initialize that has not completed is not "
                 "initialised but _objc_fatal()s (abort)",
                 "a class with its own +initialize, registered but never messaged in the "
                 "parent; one extra thread alive at fork; the child messages the class"),
      fc::hazard(
          "fork-disable-fork-safety", "fork", Outcome::kOk,
          "OBJC_DISABLE_INITIALIZE_FORK_SAFETY=YES, read when the process starts, turns "
          "the check off: the child runs +initialize and the message is gone. A "
          "workaround, not a fix: whatever another thread's +initialize was doing at fork "
          "is still half done in the child",
          "as `fork`, with OBJC_DISABLE_INITIALIZE_FORK_SAFETY=YES in the environment from exec")
          .with_env("OBJC_DISABLE_INITIALIZE_FORK_SAFETY", "YES"),
      fc::fix("spawn", "spawn", "a fresh exec is not a fork child: +initialize runs normally",
              "same parent; the worker is a fresh exec that creates the class and messages it"),
  };
  return fc::skip_all(std::move(v), fc::cases::objc_probe::unavailable_reason());
}

FORKCHECK_CASE(objc_initialize_fork_case) {
  fc::CaseDef c;
  c.id = "objc-initialize-fork";
  c.title = "macOS: a class's +initialize in the child of a multi-threaded fork crashes";
  c.source_title = "PyTorchのマルチプロセス学習でハマったところ";
  c.source_author = "M・W (Mynavi AI戦略室)";
  c.source_doc = "000";
  c.reported =
      "objc[8623]: +[MPSGraphObject initialize] may have been in progress in another thread when "
      "fork() was called. We cannot safely call it or ignore it in the fork() child process. "
      "Crashing instead. Set a breakpoint on objc_initializeAfterForkError to debug. "
      "`export OBJC_DISABLE_INITIALIZE_FORK_SAFETY=YES` hides it, a workaround; spawn avoids it.";
  c.mechanism =
      "objc4: _objc_atfork_child sets MultithreadedForkChild when the parent had threads at fork "
      "(unless OBJC_DISABLE_INITIALIZE_FORK_SAFETY was set at start-up). In such a child, "
      "initializeNonMetaClass hands a not-yet-initialised class to performForkChildInitialize, "
      "which skips a trivial +initialize but _objc_fatal()s for a class with its own.";
  c.platforms = "macOS (Objective-C runtime)";
  c.variants = &variants;
  c.run = &fc::cases::objc_probe::run;
  // What in the environment may explain a change of its outcome (forkcheck diff).
  c.environment_topics = {"os", "start-methods"};
  return c;
}

}  // namespace objc_initialize_fork
}  // namespace
