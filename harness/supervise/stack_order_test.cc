// The order of a stack taking (stack_order.h): a process being asked for its Python stacks gets
// its debugger only once its ask is over; every other process's at once.
#include "harness/supervise/stack_order.h"

#include <gtest/gtest.h>

namespace fc::harness {
namespace {

TEST(StackOrder, AProcessBeingAskedGetsItsDebuggerOnlyWhenItsAskIsOver) {
  const struct {
    ProcessId target, ask_over;
    bool being_asked, starts;
  } rows[] = {
      {10, 0, false, true},    // the taking begins: no ask, the debugger at once
      {10, 0, true, false},    // the taking begins: asked first, the debugger waits
      {10, 10, true, true},    // its ask is over: its debugger now
      {11, 10, false, false},  // another's ask is over: nothing for this one (it started already)
      {11, 10, true, false},   // another's ask is over: this one still waits for its own
  };
  for (const auto& r : rows)
    EXPECT_EQ(debugger_starts(r.target, r.ask_over, r.being_asked), r.starts)
        << "target " << r.target << ", ask over " << r.ask_over << ", being asked "
        << r.being_asked;
}

}  // namespace
}  // namespace fc::harness
