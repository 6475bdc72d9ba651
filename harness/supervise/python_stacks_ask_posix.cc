#include "harness/supervise/python_stacks_ask_posix.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "launch/process_tree.h"

namespace fc::harness {
namespace {

using Ask = PythonStacksAsk;

#ifdef __linux__
std::string read_proc(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A number of /proc/.../status: a hexadecimal mask ("SigCgt:\t0000000000000280", base 16) or a
// count ("voluntary_ctxt_switches:\t12", base 10); 0 when absent.
std::uint64_t status_number(const std::string& status, const char* field, int base) {
  const std::string key = std::string("\n") + field + ":";
  const auto at = status.find(key);
  if (at == std::string::npos) return 0;
  return std::strtoull(status.c_str() + at + key.size(), nullptr, base);
}

// One thread as its /proc/PID/task/TID/status says, in one read: what the ask's look takes of
// it, and what the check just before a signal compares.
struct TaskStatus {
  char state = '?';  // '?': no such thread (it ended)
  std::uint64_t pending = 0, switches = 0;
};

TaskStatus task_status(ProcessId pid, int tid) {
  const std::string status =
      read_proc("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/status");
  TaskStatus t;
  const auto state = status.find("\nState:\t");
  if (state != std::string::npos && state + 8 < status.size()) t.state = status[state + 8];
  t.pending = status_number(status, "SigPnd", 16);
  t.switches = status_number(status, "voluntary_ctxt_switches", 10) +
               status_number(status, "nonvoluntary_ctxt_switches", 10);
  return t;
}

std::uint64_t bit(int sig) { return sig > 0 && sig <= 64 ? 1ull << (sig - 1) : 0; }

// The state letter of a /proc stat line: the field after the command's closing parenthesis.
char stat_state(const std::string& stat) {
  const auto close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() ? '?' : stat[close + 2];
}
#endif

}  // namespace

Ask::Look look_for_ask(ProcessId pid, const Ask::Offer& offer, PythonChannel& channel,
                       Ask::Clock::time_point now) {
  Ask::Look look;
  look.now = now;
#ifdef __linux__
  const std::string proc = "/proc/" + std::to_string(pid);
  const char state = stat_state(read_proc(proc + "/stat"));
  look.gone = state == '?' || state == 'Z' || state == 'X';
  if (!look.gone) {
    const std::uint64_t caught = status_number(read_proc(proc + "/status"), "SigCgt", 16);
    look.catches_stacks = (caught & bit(PythonChannel::stacks_signal())) != 0;
    look.catches_thread = (caught & bit(PythonChannel::dump_signal())) != 0;
    const std::uint64_t ours =
        bit(PythonChannel::stacks_signal()) | bit(PythonChannel::dump_signal());
    std::vector<int> tids = offer.python_tids;
    tids.push_back(offer.main_tid);
    for (int tid : tids) {
      const TaskStatus task = task_status(pid, tid);
      const char s = task.state;
      if (s == '?' || s == 'Z' || s == 'X') continue;  // ended
      Ask::ThreadLook t;
      t.state = s;
      t.ours_pending = (task.pending & ours) != 0;
      t.switches = task.switches;
      if (s == 'S')
        if (const auto wait = launch::thread_wait(pid, tid))
          t.signal_ends_wait = wait->ended_by_any_signal;
      look.threads[tid] = t;
    }
  }
#else
  // No thread can be seen or signalled here: the main thread is taken to run, and only it is
  // asked (the bootstrap's hello said it handles the stacks signal).
  look.gone = ::kill(pid, 0) != 0 && errno == ESRCH;
  look.catches_stacks = true;
  Ask::ThreadLook main;
  main.state = 'R';
  look.threads[offer.main_tid] = main;
#endif
  channel.drain(pid, now);
  look.stacks_answers = channel.stacks_answers(pid);
  look.dump_bytes = channel.dump_size(pid);
  look.dump_last = channel.dump_last(pid);
  return look;
}

Ask::Sent send_for_ask(ProcessId pid, const Ask::Act& act, const Ask::Look& look) {
  const bool main = act.kind == Ask::Act::Kind::kAskMain;
  const int sig = main ? PythonChannel::stacks_signal() : PythonChannel::dump_signal();
#ifdef __linux__
  if (!main) {
    // One file read (the state and the switches are both in status): the shortest gap we can
    // leave between the last look and the signal.
    const auto seen = look.threads.find(act.tid);
    const TaskStatus now = task_status(pid, act.tid);
    if (seen == look.threads.end() || now.state != 'S' || now.switches != seen->second.switches)
      return Ask::Sent::kWoke;
  }
  return ::syscall(SYS_tgkill, pid, act.tid, sig) == 0 ? Ask::Sent::kSent : Ask::Sent::kFailed;
#else
  (void)look;
  return main && ::kill(pid, sig) == 0 ? Ask::Sent::kSent : Ask::Sent::kFailed;
#endif
}

PyDump dump_of_ask(const Ask& ask, const PythonChannel& channel, ProcessId pid) {
  PyDump dump;
  if (ask.main_answered()) {
    const nlohmann::json threads = channel.last_stacks(pid);
    if (!threads.is_array()) return dump;
    for (const auto& t : threads) {
      PyDumpThread one;
      const nlohmann::json ident = t.value("ident", nlohmann::json());
      const nlohmann::json tid = t.value("native_id", nlohmann::json());
      if (ident.is_number_unsigned()) one.ident = ident.get<std::uint64_t>();
      if (tid.is_number_integer()) one.tid = tid.get<int>();
      one.name = t.value("name", "");
      for (const auto& f : t.value("frames", nlohmann::json::array())) {
        PyFrame frame;
        frame.file = f.value("file", "");
        frame.line = f.value("line", 0);
        frame.function = f.value("function", "");
        one.frames.push_back(std::move(frame));
      }
      std::reverse(one.frames.begin(), one.frames.end());  // innermost first, as faulthandler's
      dump.threads.push_back(std::move(one));
    }
    return dump;
  }
  for (const auto& d : ask.thread_dumps()) {
    PyDump own = parse_faulthandler_dump(channel.dump_slice(pid, d.from, d.to));
    if (!own.fatal.empty()) continue;  // a crash's dump came instead
    for (auto& t : own.threads) {
      t.tid = d.tid;  // the bootstrap's own frames are already left out (stacks.h)
      dump.threads.push_back(std::move(t));
    }
  }
  return dump;
}

std::vector<std::string> unread_of_ask(const Ask& ask, const PythonChannel& channel,
                                       ProcessId pid) {
  std::map<int, std::string> names;
  for (const auto& [ident, t] : channel.threads_of(pid))
    if (t.native_id != 0) names[t.native_id] = t.name;
  std::vector<std::string> out;
  for (const auto& [tid, why] : ask.not_read()) {
    auto n = names.find(tid);
    const std::string name = n != names.end() && !n->second.empty() ? " \"" + n->second + "\"" : "";
    out.push_back("pid " + std::to_string(pid) + " thread " + std::to_string(tid) + name + ": " +
                  why);
  }
  return out;
}

}  // namespace fc::harness
