#include "reports/wait_chain_text.h"

#include <set>

#include "reports/report_view.h"
#include "reports/text.h"
#include "reports/ticket_environment.h"

namespace fc::reports {

namespace {

using json = nlohmann::json;

// The thread's record among the stacks (its Python name and line), if they have it.
const json* stack_of(const json& stacks, const std::string& pid, const std::string& tid) {
  for (const auto& t : stacks)
    if (field(t, "pid") == pid && field(t, "tid") == tid) return &t;
  return nullptr;
}

std::string pids_text(const json& pids, const std::string& and_word = "and") {
  std::vector<std::string> names;
  for (const auto& p : pids) names.push_back(display(p));
  std::string s = names.size() == 1 ? "pid " : "pids ";
  for (size_t i = 0; i < names.size(); ++i)
    s += (i == 0 ? "" : (i + 1 == names.size() ? " " + and_word + " " : ", ")) + names[i];
  return s;
}

// "pid 41", "pid 57's main thread", "pid 57's thread QueueFeederThread" ("its thread ..." right
// after another of the same process).
std::string who(const json& link, const json* stack, bool main_named, bool same_as_before) {
  const std::string pid = field(link, "pid");
  const std::string name = stack ? field(*stack, "name") : field(link, "thread");
  const std::string owner = same_as_before ? "its" : "pid " + pid + "'s";
  if (field(link, "tid") == pid) return main_named ? owner + " main thread" : "pid " + pid;
  return owner + " thread " + name;
}

// What the wait is: "waits in wait4 for pid 57", "waits to write 964 KiB to a pipe whose read end
// only pids 41 and 57 hold".
std::string what(const json& link) {
  const std::string on = field(link, "on");
  const std::string call = field(link, "call");
  if (on == "child")
    return "waits in " + call + " for its child pid " + field(link, "child") + " to end";
  if (on == "any child") return "waits in " + call + " for any of its children to end";
  if (on == "own process") return "waits on a lock only its own threads can release";
  if (on == "shared futex")
    return "waits on a lock shared between processes (a multiprocessing Lock, Semaphore, "
           "Condition or Event)";
  if (on != "files") return "waits in " + call;
  const auto& files = list(link, "files");
  if (files.size() == 1) {
    const json& f = files[0];
    const bool to_write = field(f, "waits_to") == "write";
    const std::string kind = field(f, "kind");
    std::string s = "waits to " + std::string(to_write ? "write" : "read");
    if (to_write && member(link, "bytes").is_number())
      s += " " + format_bytes(member(link, "bytes").get<double>());
    s += to_write ? " to" : " from";
    std::set<std::string> others;
    const auto& holders = kind == "socket" ? list(f, "peer_holders") : list(f, "holders");
    for (const auto& h : holders)
      if (kind == "socket" || (to_write ? is_true(h, "reads") : is_true(h, "writes")))
        others.insert(field(h, "pid"));
    json pids = json::array();
    for (const auto& p : others) pids.push_back(std::stoi(p));
    if (kind == "pipe")
      s += " a pipe whose " + std::string(to_write ? "read" : "write") + " end " +
           (pids.empty() ? "no process holds"
                         : "only " + pids_text(pids) + " hold" + (pids.size() == 1 ? "s" : ""));
    else if (kind == "socket")
      s += " a socket whose peer " +
           (pids.empty() ? std::string("no process holds")
                         : "only " + pids_text(pids) + " hold" + (pids.size() == 1 ? "s" : ""));
    else
      s += " fd " + field(f, "fd");
    return s;
  }
  return "waits in " + call + " on " + std::to_string(files.size()) + " pipes or sockets, which " +
         pids_text(member(link, "processes"), "or") + " can end";
}

std::string chain_end_text(const json& chain) {
  const std::string end = field(chain, "end");
  const std::string pid = field(chain, "end_pid");
  const json& p = member(member(chain, "processes"), pid.c_str());
  const std::string name = field(p, "name");
  if (end == "cycle")
    return is_true(chain, "proven")
               ? ": a deadlock across " + std::to_string(list(chain, "closed").size()) +
                     " processes, each waiting on another of them: none can ever go on"
               : ": back to pid " + pid + " (a cycle, not proven a deadlock: " +
                     field(chain, "unproven", "not every wait was read") + ")";
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

std::string wait_chain_text(const json& variant) {
  const json& chain = member(variant, "wait_chain");
  const auto& links = list(chain, "links");
  if (links.empty()) return "";
  const json& stacks = list(variant, "stacks");
  std::string s;
  std::set<std::string> pids;
  for (size_t i = 0; i < links.size(); ++i) {
    const json& l = links[i];
    const json* stack = stack_of(stacks, field(l, "pid"), field(l, "tid"));
    // A process's main thread is named as such where another of its threads follows.
    const bool more_of_it = i + 1 < links.size() && field(links[i + 1], "pid") == field(l, "pid");
    const bool same = i > 0 && field(links[i - 1], "pid") == field(l, "pid");
    s += (s.empty() ? "" : "; ") + who(l, stack, more_of_it || pids.count(field(l, "pid")), same) +
         " " + what(l);
    // Its Python line; a library's file by its name alone.
    if (stack)
      if (std::string line = python_where(*stack); !line.empty()) {
        if (line[0] == '/') line = line.substr(line.rfind('/', line.find(':')) + 1);
        s += " (" + line + ")";
      }
    pids.insert(field(l, "pid"));
  }
  return s + chain_end_text(chain);
}

}  // namespace fc::reports
