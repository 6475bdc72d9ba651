// wait_graph.h where the kernel does not show a blocked thread's system call and its arguments
// (macOS, Windows): the graph says so, and the chain is left out of the report.
#include "harness/supervise/wait_graph.h"

namespace fc::harness {

WaitGraphFacts read_wait_graph(int root, const std::vector<int>& /*pids*/,
                               std::chrono::milliseconds /*scan_budget*/,
                               const std::map<int, std::uint64_t>& /*started*/) {
  WaitGraphFacts g;
  g.root = root;
  g.why_not =
      "who waits on whom is read on Linux only (/proc shows each blocked thread's system "
      "call and its arguments)";
  return g;
}

bool signal_reaches_main_thread(int /*pid*/, int /*sig*/) { return false; }

}  // namespace fc::harness
