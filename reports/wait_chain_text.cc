#include "reports/wait_chain_text.h"

#include <set>

#include "reports/report_view.h"
#include "reports/text.h"
#include "reports/ticket_environment.h"

namespace fc::reports {

namespace {

// The thread's record among the stacks (its Python name and line), if they have it.
const Thread* stack_of(const std::vector<Thread>& stacks, const WaitLink& link) {
  for (const Thread& t : stacks)
    if (t.pid == link.pid && t.tid == link.tid) return &t;
  return nullptr;
}

std::string pids_text(const std::vector<int>& pids, const std::string& and_word = "and") {
  std::string s = pids.size() == 1 ? "pid " : "pids ";
  for (size_t i = 0; i < pids.size(); ++i)
    s += (i == 0 ? "" : (i + 1 == pids.size() ? " " + and_word + " " : ", ")) +
         std::to_string(pids[i]);
  return s;
}

// "pid 41", "pid 57's main thread", "pid 57's thread QueueFeederThread" ("its thread ..." right
// after another of the same process).
std::string who(const WaitLink& link, const Thread* stack, bool main_named, bool same_as_before) {
  const std::string pid = std::to_string(link.pid);
  const std::string& name = stack ? stack->name : link.thread;
  const std::string owner = same_as_before ? "its" : "pid " + pid + "'s";
  if (link.tid == link.pid) return main_named ? owner + " main thread" : "pid " + pid;
  return owner + " thread " + name;
}

// What the wait is: "waits in wait4 for pid 57", "waits to write 964 KiB to a pipe whose read end
// only pids 41 and 57 hold".
std::string what(const WaitLink& link) {
  const std::string& on = link.on;
  const std::string& call = link.call;
  if (on == "child")
    return "waits in " + call + " for its child pid " +
           (link.child ? std::to_string(*link.child) : std::string("?")) + " to end";
  if (on == "any child") return "waits in " + call + " for any of its children to end";
  if (on == "own process") return "waits on a lock only its own threads can release";
  if (on == "shared futex")
    return "waits on a lock shared between processes (a multiprocessing Lock, Semaphore, "
           "Condition or Event)";
  if (on != "files") return "waits in " + call;
  if (link.files.size() == 1) {
    const WaitFile& f = link.files[0];
    const bool to_write = f.waits_to == "write";
    std::string s = "waits to " + std::string(to_write ? "write" : "read");
    if (to_write && link.bytes) s += " " + format_bytes(static_cast<double>(*link.bytes));
    s += to_write ? " to" : " from";
    std::set<int> others;
    for (const FileHolder& h : f.kind == "socket" ? f.peer_holders : f.holders)
      if (f.kind == "socket" || (to_write ? h.reads : h.writes)) others.insert(h.pid);
    const std::vector<int> pids(others.begin(), others.end());
    if (f.kind == "pipe")
      s += " a pipe whose " + std::string(to_write ? "read" : "write") + " end " +
           (pids.empty() ? "no process holds"
                         : "only " + pids_text(pids) + " hold" + (pids.size() == 1 ? "s" : ""));
    else if (f.kind == "socket")
      s += " a socket whose peer " +
           (pids.empty() ? std::string("no process holds")
                         : "only " + pids_text(pids) + " hold" + (pids.size() == 1 ? "s" : ""));
    else
      s += " fd " + std::to_string(f.fd);
    return s;
  }
  return "waits in " + call + " on " + std::to_string(link.files.size()) +
         " pipes or sockets, which " + pids_text(link.processes, "or") + " can end";
}

std::string chain_end_text(const WaitChain& chain) {
  const std::string& end = chain.end;
  const std::string pid = std::to_string(chain.end_pid);
  const auto p = chain.processes.find(pid);
  const std::string name = p == chain.processes.end() ? "" : p->second.name;
  if (end == "cycle")
    return chain.proven
               ? ": a deadlock across " + std::to_string(chain.closed.size()) +
                     " processes, each waiting on another of them: none can ever go on"
               : ": back to pid " + pid + " (a cycle, not proven a deadlock: " +
                     (chain.unproven.empty() ? "not every wait was read" : chain.unproven) + ")";
  if (end == "working") return "; pid " + pid + " (" + name + ") is working";
  if (end == "asleep")
    return "; pid " + pid + " (" + name + ") is asleep in a wait that ends by itself";
  if (end == "outside")
    return "; pid " + pid + " (" + name + ") outside the program's tree holds the other end";
  if (end == "self")
    return "; pid " + pid +
           " waits on a pipe whose other end only it holds: no other process will "
           "ever end that wait";
  if (end == "unknown") return "; pid " + pid + " waits where forkcheck cannot tell on whom";
  return "";
}

}  // namespace

std::string wait_chain_text(const Variant& variant) {
  if (!variant.wait_chain || variant.wait_chain->links.empty()) return "";
  const WaitChain& chain = *variant.wait_chain;
  const std::vector<WaitLink>& links = chain.links;
  std::string s;
  std::set<int> pids;
  for (size_t i = 0; i < links.size(); ++i) {
    const WaitLink& l = links[i];
    const Thread* stack = stack_of(variant.stacks, l);
    // A process's main thread is named as such where another of its threads follows.
    const bool more_of_it = i + 1 < links.size() && links[i + 1].pid == l.pid;
    const bool same = i > 0 && links[i - 1].pid == l.pid;
    s += (s.empty() ? "" : "; ") + who(l, stack, more_of_it || pids.count(l.pid), same) + " " +
         what(l);
    // Its Python line; a library's file by its name alone.
    if (stack)
      if (std::string line = python_where(*stack); !line.empty()) {
        if (line[0] == '/') line = line.substr(line.rfind('/', line.find(':')) + 1);
        s += " (" + line + ")";
      }
    pids.insert(l.pid);
  }
  return s + chain_end_text(chain);
}

}  // namespace fc::reports
