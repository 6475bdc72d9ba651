#include "harness/supervise/wait_graph.h"

#include <algorithm>

namespace fc::harness {

namespace {

using On = ThreadWaitFact::On;

enum class State { kWorking, kAsleep, kBlocked, kHeld, kGone };

State state_of(const WaitGraphFacts& g, int pid) {
  bool any = false, timed = false, held = false;
  for (const auto& t : g.threads) {
    if (t.pid != pid) continue;
    any = true;
    if (t.on == On::kRunning) return State::kWorking;
    timed = timed || t.on == On::kTimed;
    held = held || t.on == On::kHeld;
  }
  if (!any) return State::kGone;
  if (timed) return State::kAsleep;
  return held ? State::kHeld : State::kBlocked;
}

const char* state_name(State s) {
  switch (s) {
    case State::kWorking:
      return "working";
    case State::kAsleep:
      return "asleep";
    case State::kBlocked:
      return "blocked";
    case State::kHeld:
      return "held";
    case State::kGone:
      break;
  }
  return "gone";
}

// The processes that can end a thread's wait; `known` false where that is not known here.
struct Satisfiers {
  std::vector<int> pids;
  bool known = true;
};

void add(std::vector<int>& v, int pid) {
  if (std::find(v.begin(), v.end(), pid) == v.end()) v.push_back(pid);
}

Satisfiers satisfiers(const WaitGraphFacts& g, const ThreadWaitFact& t) {
  Satisfiers s;
  switch (t.on) {
    case On::kOwnProcess:
      s.pids = {t.pid};
      break;
    case On::kSharedFutex:
      // Any process mapping the word: of the tree, those that share its memory; which ones is not
      // read, so every process of it.
      for (const auto& [pid, p] : g.processes)
        if (p.in_tree) add(s.pids, pid);
      break;
    case On::kChild:
      s.pids = {t.child};
      break;
    case On::kAnyChild:
      for (const auto& [pid, p] : g.processes)
        if (p.in_tree && p.ppid == t.pid) add(s.pids, pid);
      break;
    case On::kFiles:
      for (const auto& f : t.files) {
        std::uint64_t other = f.inode;
        if (f.kind == "socket") {
          const auto peer = g.peers.find(f.inode);
          if (peer == g.peers.end()) {
            s.known = false;
            continue;
          }
          other = peer->second;
        } else if (f.kind != "pipe") {
          s.known = false;
          continue;
        }
        // A pipe: those holding the other end; a socket: those holding its peer. None seen (the
        // wait would have ended at EOF): one forkcheck cannot see (another PID namespace,
        // another user's process) holds it: not known.
        bool seen = false;
        const auto h = g.holders.find(other);
        if (h != g.holders.end())
          for (const auto& holder : h->second)
            if (f.kind == "socket" || (f.to_write ? holder.reads : holder.writes)) {
              add(s.pids, holder.pid);
              seen = true;
            }
        if (!seen) s.known = false;
      }
      break;
    case On::kRunning:
    case On::kTimed:
      break;
    case On::kHeld:
    case On::kOther:
      s.known = false;
      break;
  }
  return s;
}

bool in_tree(const WaitGraphFacts& g, int pid) {
  const auto it = g.processes.find(pid);
  return it != g.processes.end() && it->second.in_tree;
}

// Whether every process the waits of `root` reach is blocked, waiting only on known objects of
// processes of the tree: then none can ever go on. `closed` gets them; `why_not` what stands in
// the way of the proof.
bool proven_deadlock(const WaitGraphFacts& g, int root, std::vector<int>& closed,
                     std::string& why_not) {
  std::vector<int> todo = {root};
  closed.clear();
  while (!todo.empty()) {
    const int pid = todo.back();
    todo.pop_back();
    if (std::find(closed.begin(), closed.end(), pid) != closed.end()) continue;
    const std::string who = "pid " + std::to_string(pid);
    if (!in_tree(g, pid)) {
      why_not = who + " is outside the program's tree";
      return false;
    }
    if (const State s = state_of(g, pid); s != State::kBlocked) {
      why_not = who + (s == State::kHeld ? " is stopped (by a signal or a debugger)"
                                         : " is " + std::string(state_name(s)));
      return false;
    }
    // A timer it armed (alarm(), setitimer) may still run a handler that acts.
    if (g.processes.at(pid).timer_handler) {
      why_not = who + " catches a timer's signal (SIGALRM, SIGVTALRM or SIGPROF)";
      return false;
    }
    closed.push_back(pid);
    for (const auto& t : g.threads) {
      if (t.pid != pid) continue;
      const Satisfiers s = satisfiers(g, t);
      if (!s.known) {
        why_not = who + "'s thread " + std::to_string(t.tid) + " waits in " +
                  (t.call.empty() ? std::string("a call") : t.call) +
                  " on something whose other side was not seen";
        return false;
      }
      for (int p : s.pids) todo.push_back(p);
    }
  }
  std::sort(closed.begin(), closed.end());
  // One process waiting only on its own threads is the watchdog's "stuck", not a chain.
  return closed.size() > 1;
}

// The thread of `pid` whose wait leads on to another process: its main thread's where that one
// waits on another process, else the first thread that does; nullptr when none does. `self_only`
// is set when a thread's wait could only be ended by `pid` itself (the other end is its own).
const ThreadWaitFact* lead_wait(const WaitGraphFacts& g, int pid, bool& self_only, bool& unknown) {
  const ThreadWaitFact* first = nullptr;
  for (const auto& t : g.threads) {
    if (t.pid != pid || t.on == On::kOwnProcess) continue;
    const Satisfiers s = satisfiers(g, t);
    if (!s.known) {
      unknown = true;
      continue;
    }
    const bool others = std::any_of(s.pids.begin(), s.pids.end(), [&](int p) { return p != pid; });
    if (!others) {
      self_only = self_only || t.on == On::kFiles;
      continue;
    }
    if (t.tid == pid) return &t;
    if (!first) first = &t;
  }
  return first;
}

}  // namespace

WaitChain follow_waits(const WaitGraphFacts& g) {
  WaitChain c;
  if (!g.read) return c;
  std::vector<int> chain;
  int pid = g.root;
  while (true) {
    const State s = state_of(g, pid);
    if (pid != g.root || s != State::kBlocked) {
      if (!in_tree(g, pid) && pid != g.root) {
        c.end = WaitChain::End::kOutside;
      } else if (s == State::kWorking) {
        c.end = WaitChain::End::kWorking;
      } else if (s == State::kAsleep) {
        c.end = WaitChain::End::kAsleep;
      } else if (s != State::kBlocked) {
        c.end = WaitChain::End::kUnknown;
      }
      if (c.end != WaitChain::End::kNone) {
        c.end_pid = pid;
        break;
      }
    }
    chain.push_back(pid);
    bool self_only = false, unknown = false;
    const ThreadWaitFact* lead = lead_wait(g, pid, self_only, unknown);
    if (!lead) {
      c.end = self_only ? WaitChain::End::kSelf
                        : (unknown ? WaitChain::End::kUnknown : WaitChain::End::kNone);
      c.end_pid = pid;
      break;
    }
    // A main thread that waits on its own threads (joins one) before the one that waits outside.
    for (const auto& t : g.threads)
      if (t.pid == pid && t.tid == pid && lead->tid != pid && t.on == On::kOwnProcess)
        c.links.push_back({t, {pid}});
    WaitLink link{*lead, satisfiers(g, *lead).pids};
    link.on.erase(std::remove(link.on.begin(), link.on.end(), pid), link.on.end());
    c.links.push_back(link);
    // Every process that can end the wait already in the chain: a cycle; else on to the first
    // that is not (another process can still act).
    const auto next = std::find_if(link.on.begin(), link.on.end(), [&](int p) {
      return std::find(chain.begin(), chain.end(), p) == chain.end();
    });
    if (next == link.on.end()) {
      c.end = WaitChain::End::kCycle;
      c.end_pid = link.on.front();
      break;
    }
    pid = *next;
  }
  if (!c.links.empty()) c.proven = proven_deadlock(g, g.root, c.closed, c.unproven);
  if (!c.proven) c.closed.clear();
  if (c.proven) c.unproven.clear();
  return c;
}

namespace {

const char* on_name(On on) {
  switch (on) {
    case On::kRunning:
      return "running";
    case On::kTimed:
      return "timed";
    case On::kOwnProcess:
      return "own process";
    case On::kSharedFutex:
      return "shared futex";
    case On::kChild:
      return "child";
    case On::kAnyChild:
      return "any child";
    case On::kFiles:
      return "files";
    case On::kHeld:
      return "held";
    case On::kOther:
      break;
  }
  return "other";
}

const char* end_name(WaitChain::End e) {
  switch (e) {
    case WaitChain::End::kCycle:
      return "cycle";
    case WaitChain::End::kWorking:
      return "working";
    case WaitChain::End::kAsleep:
      return "asleep";
    case WaitChain::End::kOutside:
      return "outside";
    case WaitChain::End::kSelf:
      return "self";
    case WaitChain::End::kUnknown:
      return "unknown";
    case WaitChain::End::kNone:
      break;
  }
  return "none";
}

}  // namespace

nlohmann::json to_json(const WaitChain& c, const WaitGraphFacts& g) {
  if (!g.read) return {{"read", false}, {"why_not", g.why_not}};
  nlohmann::json links = nlohmann::json::array();
  std::set<int> named = {g.root};
  for (const auto& l : c.links) {
    const ThreadWaitFact& w = l.wait;
    nlohmann::json link = {{"pid", w.pid},   {"tid", w.tid},        {"thread", w.thread},
                           {"call", w.call}, {"on", on_name(w.on)}, {"processes", l.on}};
    if (w.on == On::kChild) link["child"] = w.child;
    if (w.bytes > 0) link["bytes"] = w.bytes;
    if (!w.files.empty()) {
      nlohmann::json files = nlohmann::json::array();
      for (const auto& f : w.files) {
        nlohmann::json file = {{"fd", f.fd},
                               {"kind", f.kind},
                               {"inode", f.inode},
                               {"waits_to", f.to_write ? "write" : "read"}};
        // Who holds it, and for a socket who holds its peer.
        const auto peer = g.peers.find(f.inode);
        if (peer != g.peers.end()) file["peer"] = peer->second;
        const auto h = g.holders.find(peer != g.peers.end() ? peer->second : f.inode);
        nlohmann::json holders = nlohmann::json::array();
        if (h != g.holders.end())
          for (const auto& x : h->second) {
            holders.push_back(
                {{"pid", x.pid}, {"fd", x.fd}, {"reads", x.reads}, {"writes", x.writes}});
            named.insert(x.pid);
          }
        file[peer != g.peers.end() ? "peer_holders" : "holders"] = holders;
        files.push_back(file);
      }
      link["files"] = files;
    }
    named.insert(w.pid);
    for (int p : l.on) named.insert(p);
    links.push_back(link);
  }
  named.insert(c.end_pid);
  nlohmann::json processes = nlohmann::json::object();
  for (int pid : named) {
    const auto it = g.processes.find(pid);
    if (it == g.processes.end()) continue;
    processes[std::to_string(pid)] = {{"name", it->second.name},
                                      {"ppid", it->second.ppid},
                                      {"in_tree", it->second.in_tree},
                                      {"state", state_name(state_of(g, pid))}};
  }
  nlohmann::json out = {{"read", true},           {"root", g.root},       {"links", links},
                        {"end", end_name(c.end)}, {"end_pid", c.end_pid}, {"proven", c.proven},
                        {"processes", processes}};
  if (c.proven) out["closed"] = c.closed;
  if (!c.proven && !c.unproven.empty()) out["unproven"] = c.unproven;
  return out;
}

}  // namespace fc::harness
