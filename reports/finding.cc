#include "reports/finding.h"

#include <algorithm>
#include <map>
#include <set>

#include "reports/known_causes.h"
#include "reports/memory_text.h"
#include "reports/model/report_model_json.h"
#include "reports/python_view.h"
#include "reports/report_view.h"
#include "reports/start_method_reasons.h"
#include "reports/text.h"
#include "reports/torch_cases.h"
#include "reports/wait_chain_text.h"
#include "reports/watch_view.h"
#include "reports/watchdog_text.h"
#include "reports/whose_torch.h"

namespace fc::reports {
namespace {

using json = nlohmann::json;

// The fix for a tree stuck in libgomp after a fork: what CASES.md's gomp cases establish.
constexpr const char* kGompWhy =
    "a process waits inside libgomp (GNU OpenMP), whose thread pool does not survive fork: ";
constexpr const char* kGompFix =
    "start the workers with spawn or forkserver (multiprocessing.get_context(\"spawn\")), or run "
    "no parallel torch op in the parent before it forks";

// The C library's own frames (the wait itself, its lock and join wrappers): after the innermost,
// they say less than the caller's.
bool in_c_library(const std::string& frame) {
  for (const char* where : {"nptl/", "sysdeps/", "csu/", "/libc.so", "/libpthread.so"})
    if (frame.find(where) != std::string::npos) return true;
  return false;
}

// "__GI___lll_lock_wait < (anonymous namespace)::lock_a_then_b < main": the innermost frame, then
// the first ones outside the C library, three names in all.
std::string native_where(const Thread& t) {
  std::string s;
  size_t shown = 0;
  for (const std::string& frame : t.frames) {
    std::string name = frame.substr(0, std::min(frame.find(" at "), frame.find(" from ")));
    if (name.empty() || name == "??" || (shown > 0 && in_c_library(frame))) continue;
    s += (s.empty() ? "" : " < ") + name;
    if (++shown == 3) break;
  }
  if (s.empty() && !t.syscall.empty()) s = "in syscall " + t.syscall;
  return s;
}

// The stacks that say where it is stuck: those time was called with, else those of a stall it
// never came out of. A program that ended by itself is stuck nowhere.
const std::vector<Thread>& stacks_of(const Variant& v) {
  static const std::vector<Thread> none;
  if (!v.stacks.empty()) return v.stacks;
  if (v.outcome == "ok" || v.outcome == "error" || v.outcome == "crash") return none;
  if (v.stall && !v.stall->resumed_after_s) return v.stall->stacks;
  return none;
}

}  // namespace

std::string stuck_kind(const StuckProcess& stuck) {
  if (stuck.wait.rfind("pause", 0) == 0) return "pause";
  return stuck.threads == 1 ? "lock" : "locks";
}

namespace {

// A process that can never go on by itself (the watchdog's "stuck"): what that means, and the
// usual way out. One thread waiting on a lock no other thread of its process can release either
// holds it already, or was forked while another thread held it; several threads of a process
// waiting so wait for each other. `shown_by`: the catalog's case whose failure shows so.
std::string stuck_fix(const StuckProcess& stuck, const std::string& shown_by) {
  const std::string pid = "pid " + std::to_string(stuck.pid);
  const std::string page = shown_by.empty() ? "" : " (forkcheck list " + shown_by + ")";
  const std::string kind = stuck_kind(stuck);
  if (kind == "pause")
    return pid +
           " waits in pause() and catches no signal: only a signal that kills it ends the "
           "wait. Whoever waits for it must not wait without a deadline: join it with a "
           "timeout, then kill it" +
           page;
  if (kind == "lock")
    return pid +
           " waits for a lock that no other thread of its process can release: either its "
           "one thread holds it already (a lock that is not reentrant, taken twice), or "
           "the process was forked while another thread held it (a logging handler, an "
           "allocator, a queue's feeder: fork copies the lock, not its owner). For the "
           "latter, start workers with spawn or forkserver, or fork before any thread "
           "starts" +
           page;
  return pid +
         "'s threads all wait on locks private to the process, each for another: a "
         "deadlock inside it (take the locks in one order), or locks copied locked by a "
         "fork" +
         page;
}

// Where the fork that made `pid` started, against the main guard (details.fork_guards, read
// from the script by exec and matrix): spawn and forkserver run the main script again in each
// worker, so code that starts workers outside `if __name__ == "__main__":` must move under it
// first. "" where the guard is there, or not known.
std::string fork_guard_advice(const Variant& v, int pid) {
  if (!v.python) return "";
  for (const auto& p : v.python->processes) {
    if (p.pid != pid || !p.ppid || !p.fork_seq) continue;
    for (const ForkGuard& g : v.fork_guards)
      if (g.pid == *p.ppid && fork_entry_covers(g.seq, g.last_seq, p.fork_seq) &&
          g.guard == "unguarded") {
        const std::string file = g.file.substr(g.file.rfind('/') + 1);
        return "First put the code that starts them (" + file + ":" +
               (g.line ? std::to_string(*g.line) : "?") +
               ") under if __name__ == \"__main__\": (spawn and forkserver run the main script "
               "again in each worker). ";
      }
  }
  return "";
}

// Each worker function a spawned or forkserver worker could not find where it is defined
// (details.worker_homes, read from the script by exec and matrix), with where to move it: "'train'
// (train.py:6) is defined under `if __name__ == "__main__":` ...: move it to module level, above
// the __main__ guard; ". "" where none must move, or where it is not known.
std::string worker_home_advice(const Variant& v) {
  std::set<std::string> said;
  std::string s;
  auto line = [](const std::optional<long long>& n) { return n ? std::to_string(*n) : "?"; };
  for (const WorkerHomeFact& h : v.worker_homes) {
    const std::string& home = h.home;
    if (home != "main-guard" && home != "nested") continue;
    const std::string file = h.file.substr(h.file.rfind('/') + 1);
    // A method: its class is what must move.
    const std::string name =
        h.class_name.empty() ? "'" + h.function + "' (" + file + ":" + line(h.line) + ")"
                             : "class '" + h.class_name + "' (" + file + ":" + line(h.class_line) +
                                   "), whose method '" + h.function + "' the worker runs,";
    if (!said.insert(name).second) continue;
    s += name +
         (home == "main-guard"
              ? " is defined under `if __name__ == \"__main__\":`, which a spawn or forkserver "
                "worker does not run (it imports the main script again and finds only what its "
                "top level defines): move it to module level, above the __main__ guard; "
              : " is defined inside another function, and pickle cannot name what is local to a "
                "function, so spawn and forkserver cannot send it to a worker: move it to module "
                "level; ");
  }
  return s;
}

Finding subject_finding(const Case& c, const Variant& v) {
  Finding f;
  const std::string& outcome = v.outcome;
  const std::string& command = c.id;
  f.bad = c.verdict != "ok";
  const std::string hazards = watch_failure(v);
  // Its own process exited 0 while processes of it failed (stored as an error): that, first, and
  // never a worker's traceback as if it were the program's own error.
  const bool exited_zero = exited_zero_but_processes_failed(v);
  if (!hazards.empty() && (outcome == "ok" || exited_zero)) {
    f.headline = command + ": the program " +
                 (exited_zero ? "exited 0, but " + descendants_failure_count(v) + ", and it made "
                              : std::string("ended ok, but made ")) +
                 hazards;
  } else if (exited_zero) {
    f.headline = command + ": the program exited 0, but " + shorten(descendants_failure(v), 240);
  } else if (member(v.details, "ended_by_forkcheck").is_string()) {
    // Its workers kept failing at start and forkcheck ended it: the message says so.
    f.headline = command + ": error: " + shorten(v.message, 240);
  } else if (const std::string error = outcome == "error" ? error_headline(v) : "";
             !error.empty()) {
    // The exception that ended it, at the user's own line, not the last lines of stderr.
    f.headline = command + ": error: " + error;
  } else if (const std::string line = outcome == "crash" ? crash_line(v) : ""; !line.empty()) {
    f.headline = command + ": crash: " + v.message.substr(0, v.message.find(';')) + " at " + line;
  } else {
    // The message's first clause: its parenthesised facts are in the report, not the headline,
    // and so, where time was called, is what followed its why (a stuck process, the signals).
    std::string message = v.message;
    // An error's message is the program's own last lines, then its exit status: only that is
    // cut, never the program's own parentheses ("worker loader-0 (pid 18765) is killed").
    const auto exit_status = message.rfind(" (exit status ");
    if (outcome == "error" && exit_status != std::string::npos && exit_status >= 20)
      message.resize(exit_status);
    else if (const auto paren = message.find(" (");
             outcome != "error" && paren != std::string::npos && paren >= 20)
      message.resize(paren);
    if (const auto semi = message.find("; ");
        semi != std::string::npos && (outcome == "hang" || outcome == "timeout"))
      message.resize(semi);
    message = shorten(message, 203);
    // Not finished (interrupted): the message says so, and "skip" is the catalog's word.
    f.headline =
        command + ": " +
        (unfinished(v) && !message.empty() ? message
                                           : outcome + (message.empty() ? "" : ": " + message));
  }
  // Who waits on whom, to the root of the wait: first, as it is the why of a stopped tree.
  if (const std::string chain = wait_chain_text(v); !chain.empty()) f.facts.push_back(chain);
  // The test a test runner was in when it stopped or stalled: where to look first in a suite.
  if (outcome != "ok" || v.stall) {
    std::string test = v.watchdog.stuck ? running_test(v, v.watchdog.stuck->pid) : "";
    if (test.empty()) test = running_test(v);
    if (!test.empty()) f.facts.push_back("in the test " + test);
  }
  // The cause a rule of known shapes found (known_causes.h), and what of its shape was not seen.
  if (v.cause) {
    f.facts.push_back("why: " + v.cause->cause + " (" + v.cause->source + ")");
    if (!v.cause->missing.empty()) f.facts.push_back("not seen: " + v.cause->missing);
  }
  if (!v.start_method.empty() && v.start_method != "none")
    if (const std::string own = own_start_method_choice(v); !own.empty()) f.facts.push_back(own);
  for (const auto& d : failed_descendants(v))
    if (outcome != "ok" || f.facts.size() < 4) {
      f.facts.push_back("pid " + std::to_string(d.pid) + (d.what.empty() ? "" : " " + d.what) +
                        ": " + d.how + (d.where.empty() ? "" : " at " + d.where) +
                        (d.where_from.empty() ? "" : " (" + d.where_from + ")") +
                        (d.test.empty() ? "" : " during " + d.test));
      if (!d.memory.empty() && (d.how.find("SIGKILL") != std::string::npos))
        f.facts.push_back("  pid " + std::to_string(d.pid) + " memory: " + d.memory);
      // A crash in a child of a fork made while threads ran: the fork the bootstrap saw.
      if (d.how.rfind("killed by", 0) == 0 || d.how.rfind("crashed", 0) == 0)
        if (const std::string forked = fork_with_threads(v, d.pid); !forked.empty())
          f.facts.push_back("  pid " + std::to_string(d.pid) + " " + forked);
    }
  // What forkcheck could not keep of the Python side: said wherever it bit.
  if (const std::string drops = python_drops_text(v); !drops.empty()) f.facts.push_back(drops);
  // Processes whose private memory grew far past what they had at first (copy-on-write).
  if (const std::string grew = memory_growth_fact(v); !grew.empty())
    f.facts.push_back("memory: " + grew);
  // A process stuck on a lock, born of a fork made while other threads ran: which fork.
  // Interrupted (Ctrl-C) while a process was stuck for good and its stall never ended: that
  // process, as the watchdog would have recorded it for a hang.
  const std::optional<StuckProcess>& stuck_record =
      v.watchdog.stuck || !unfinished(v) || !v.stall || v.stall->resumed_after_s ? v.watchdog.stuck
                                                                                 : v.stall->process;
  const std::string stuck_forked = stuck_record && stuck_kind(*stuck_record) != "pause"
                                       ? fork_with_threads(v, stuck_record->pid)
                                       : "";
  if (!stuck_forked.empty())
    f.facts.push_back("pid " + std::to_string(stuck_record->pid) + " " + stuck_forked);
  const std::vector<Thread>& stacks = stacks_of(v);
  for (const auto& line : where_it_waits(stacks, 8)) f.facts.push_back(line);
  // What the tree was doing when time was called: the message says why, this line what (its
  // CPU, its processes and threads, what they waited in), the same line as in every report.
  if (outcome == "hang" || outcome == "timeout")
    if (const std::string tree = tree_facts(v.watchdog, v.outcome); !tree.empty())
      f.facts.push_back("process tree: " + tree);
  if (v.stall && outcome != "hang") {
    const Stall& s = *v.stall;
    f.facts.push_back(
        "its whole tree stalled at " + format_seconds(s.after_s) +
        (s.resumed_after_s ? " and worked again at " + format_seconds(*s.resumed_after_s) : ""));
  }
  // A loaded machine: how long its threads waited for a CPU, when that was a good part of the run.
  const double queued = v.watchdog.activity ? v.watchdog.activity->run_queue_s : 0.0;
  // "Not stuck" only where nothing proved it stuck: a deadlock on a loaded machine is still one.
  const bool proven_stuck = v.watchdog.stuck || (v.wait_chain && v.wait_chain->end == "cycle");
  if (queued >= 1.0 && v.duration_s > 0 && queued >= 0.25 * v.duration_s)
    f.facts.push_back("its threads waited " + format_seconds(queued) +
                      " in all for a CPU: the machine was overloaded" +
                      (proven_stuck ? "" : " (it was slowed, not stuck)"));
  const std::vector<WatchFinding>& findings = watch_findings(v);
  if (!hazards.empty() && !findings.empty()) {
    std::string fix;
    for (const std::string& line : findings[0].fix) fix += (fix.empty() ? "" : " ") + line;
    f.fix = fix;
  } else if (v.cause && !v.cause->fix.empty()) {
    f.fix = v.cause->fix;
  } else if (!v.explained_by.empty()) {
    // A message the catalog knows: its case's fix, and the page that shows the failure.
    const ExplainedBy& known = v.explained_by[0];
    f.fix = known.fix + " (forkcheck list " + known.case_id + ")";
  } else if ((outcome == "hang" || outcome == "timeout" || !stacks.empty()) &&
             stuck_in_libgomp(stacks)) {
    const std::string home = worker_home_advice(v);
    f.fix = std::string(kGompWhy) + (home.empty() ? "" : home + "then ") + kGompFix;
  } else if (!stuck_forked.empty()) {
    // Seen, not supposed: the stuck process was forked while other threads ran.
    const std::string page = field(v.details, "stuck_shown_by");
    // A bare os.fork() has no start method to change: the child is started another way, and
    // where the code that forked stands against the main guard is no first step.
    const PythonFork* made = fork_with_threads_that_made(v, stuck_record->pid);
    const bool bare = made && forked_by_multiprocessing(*made) == false;
    const std::string guard = bare ? "" : fork_guard_advice(v, stuck_record->pid);
    std::string home = worker_home_advice(v);
    if (!home.empty()) home = (guard.empty() ? "First: " : "Then: ") + home;
    const std::string start =
        bare ? std::string(home.empty() ? "It" : "then it") +
                   " was forked by os.fork() itself, which no start method changes: start the "
                   "child with multiprocessing.get_context(\"spawn\").Process, its target a "
                   "function at module level (or subprocess, to run a program)"
             : std::string(home.empty() ? "Start" : "then start") +
                   " the workers with spawn or forkserver "
                   "(multiprocessing.get_context(\"spawn\"))";
    f.fix = "pid " + std::to_string(stuck_record->pid) +
            " waits for a lock no other thread of its process can release, and it " + stuck_forked +
            ": the fork copied the locks those threads held, not the threads. " + guard + home +
            start + ", or fork before any thread starts" +
            (page.empty() ? "" : " (forkcheck list " + page + ")");
  } else if (stuck_record) {
    f.fix = stuck_fix(*stuck_record, field(v.details, "stuck_shown_by"));
  }
  return f;
}

Finding catalog_finding(const Report& report) {
  Finding f;
  const auto& cases = report.cases;
  std::map<std::string, int> by_verdict;
  std::vector<std::string> off;
  // Fix variants by start method, for the record line.
  std::map<std::string, std::pair<size_t, size_t>> fixes;  // method -> (ok, ran)
  // The closing advice rests on cases whose hazard is fork's, by the catalog's naming: the
  // variant named after a method is the case's own program under that method. A case counts
  // when a fork hazard failed as documented, its plain "fork" variant (if any) is not a fix
  // (where it is, the hazard is not fork's), and its plain "spawn"/"forkserver"
  // variants ran, all as fixes. Their record is those plain variants' alone.
  std::vector<std::string> fork_cases;
  size_t plain_ok = 0, plain_ran = 0;
  // Cases whose plain spawn or forkserver variant failed as documented: spawn is no fix there.
  std::vector<std::string> safe_fails;
  for (const Case& c : cases) {
    ++by_verdict[c.verdict];
    const std::string& verdict = c.verdict;
    // Not as documented, or skipped: each says why (a skip without its reason is no finding).
    if (verdict != "reproduced" && verdict != "ok")
      off.push_back(c.id + ": " + verdict + " (" + shorten(c.verdict_reason, 163) + ")");
    bool fork_failed = false, plain_fork_is_fix = false, plain_safe_hazard = false,
         plain_safe_failed = false;
    size_t ok_here = 0, ran_here = 0;
    for (const Variant& v : c.variants) {
      const std::string &method = v.start_method, &name = v.name, &role = v.role,
                        &outcome = v.outcome;
      const bool as_documented = outcome != "skip" && outcome == v.expected && !unfinished(v);
      const bool plain_safe = name == "spawn" || name == "forkserver";
      if (role == "hazard" && method == "fork" && as_documented && outcome != "ok")
        fork_failed = true;
      if (name == "fork" && role == "fix") plain_fork_is_fix = true;
      if (plain_safe && role == "hazard") {
        plain_safe_hazard = true;
        if (as_documented && outcome != "ok") plain_safe_failed = true;
      }
      if (plain_safe && role == "fix" && outcome != "skip" && !unfinished(v)) {
        ++ran_here;
        if (outcome == "ok") ++ok_here;
      }
      if (role != "fix" || outcome == "skip") continue;
      auto& [ok, ran] = fixes[method];
      ++ran;
      if (outcome == "ok") ++ok;
    }
    if (fork_failed && !plain_fork_is_fix && !plain_safe_hazard && ran_here > 0) {
      fork_cases.push_back(c.id);
      plain_ok += ok_here;
      plain_ran += ran_here;
    }
    if (plain_safe_failed) safe_fails.push_back(c.id);
  }
  auto count = [&by_verdict](const char* v) {
    const auto it = by_verdict.find(v);
    return it == by_verdict.end() ? 0 : it->second;
  };
  f.bad = count("regression") > 0 || count("failed") > 0 || !report.summary.ok.value_or(true);
  std::string counts;
  for (const auto& [verdict, n] : by_verdict)
    counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + verdict;
  f.headline = std::to_string(cases.size()) + " cases: " + counts;
  if (!report.run.complete) f.headline += " (a partial run)";
  for (size_t i = 0; i < off.size() && i < 6; ++i) f.facts.push_back(off[i]);
  if (off.size() > 6) f.facts.push_back("and " + std::to_string(off.size() - 6) + " more");
  std::string record;
  for (const auto& [method, r] : fixes)
    record += (record.empty() ? "" : ", ") + method + " " + std::to_string(r.first) + " of " +
              std::to_string(r.second);
  if (!record.empty()) f.facts.push_back("fix variants ok: " + record);
  // `forkcheck all` from a package: its torch cases built here, or not run and why.
  if (field(report.run.options, "only").empty())
    if (const std::string t = run_torch_cases_text(report.run.environment); !t.empty())
      f.facts.push_back("torch cases: " + t);
  auto joined = [](const std::vector<std::string>& ids) {
    std::string out;
    for (const auto& id : ids) out += (out.empty() ? "" : ", ") + id;
    return out;
  };
  // Advice only where this run showed it: no fork case (a --only run of others), no advice on
  // start methods.
  const std::string own_fix =
      safe_fails.empty()
          ? ""
          : std::to_string(safe_fails.size()) +
                (safe_fails.size() == 1
                     ? " case fails under spawn or forkserver as documented, and needs its own "
                       "fix: "
                     : " cases fail under spawn or forkserver as documented, and need their own "
                       "fix: ") +
                joined(safe_fails);
  if (fork_cases.empty() && !own_fix.empty()) f.fix = own_fix + " (each case's page has it)";
  if (!fork_cases.empty() && plain_ok == plain_ran) {
    f.fix = "start workers with spawn or forkserver rather than fork where the hazard is fork's (" +
            std::to_string(fork_cases.size()) + (fork_cases.size() == 1 ? " case: " : " cases: ") +
            joined(fork_cases) + "): each of their " + std::to_string(plain_ran) +
            " spawn and forkserver variants was ok in this run (each case's page has the fix for "
            "its hazard)";
    if (!own_fix.empty()) f.fix += "; " + own_fix;
  }
  return f;
}

}  // namespace

bool stuck_in_libgomp(const std::vector<Thread>& stacks) {
  // A process's main thread waiting inside libgomp: the forked child stuck at its next parallel
  // region. Idle pool threads of a healthy libtorch process also sit in libgomp: they do not
  // count.
  for (const Thread& t : stacks) {
    if (t.tid != t.pid) continue;
    for (const std::string& s : t.frames)
      if (s.find("libgomp") != std::string::npos || s.rfind("GOMP_", 0) == 0 ||
          s.rfind("gomp_", 0) == 0)
        return true;
  }
  return false;
}

std::vector<std::string> where_it_waits(const std::vector<Thread>& stacks, size_t max) {
  std::map<std::string, std::vector<std::string>> same;  // where -> "pid P tid T name"
  std::vector<std::string> order;
  std::set<int> python_pids;
  for (const Thread& t : stacks)
    if (!t.python.empty()) python_pids.insert(t.pid);
  for (const Thread& t : stacks) {
    std::string where;
    if (python_pids.count(t.pid)) {
      if (t.python.empty()) continue;  // a native helper thread of a Python process
      where = python_where(t);
    } else {
      if (t.pid != t.tid && t.frames.empty()) continue;
      where = native_where(t);
    }
    if (where.empty()) continue;
    if (!same.count(where)) order.push_back(where);
    same[where].push_back("pid " + std::to_string(t.pid) + " " + t.name);
  }
  // One line per place, naming who waits there: five workers stuck alike are one line.
  std::vector<std::string> lines;
  for (const auto& where : order) {
    if (lines.size() == max) {
      lines.push_back("and " + std::to_string(order.size() - max) + " more places (in the report)");
      break;
    }
    const auto& who = same[where];
    lines.push_back(who.front() +
                    (who.size() > 1 ? " and " + std::to_string(who.size() - 1) + " more" : "") +
                    ": " + where);
  }
  return lines;
}

// `forkcheck matrix`: the verdict per start method, each failing one with its first line and,
// where the run shows it, why and the change that fixes it.
Finding matrix_finding(const Report& report, const Case& c) {
  Finding f;
  f.bad = c.verdict != "ok";
  std::string ok_under, failed_under;
  std::map<std::string, std::string> said_under;  // why -> the first method it was said for
  std::vector<std::pair<std::string, std::string>> fixes;  // (methods, fix)
  for (const Variant& v : c.variants) {
    const std::string& name = v.name;
    if (subject_ok(v)) {
      ok_under += (ok_under.empty() ? "" : ", ") + name;
      f.facts.push_back(name + ": ok (" + format_seconds(v.duration_s) + ")");
      continue;
    }
    if (unfinished(v)) {
      f.facts.push_back(name + ": " + outcome_shown(v));
      continue;
    }
    failed_under += (failed_under.empty() ? "" : ", ") + name;
    Finding one = subject_finding(c, v);
    const std::string prefix = c.id + ": ";
    std::string line =
        one.headline.rfind(prefix, 0) == 0 ? one.headline.substr(prefix.size()) : one.headline;
    f.facts.push_back(name + ": " + line);
    // Where a hung method's processes wait (its first two such lines).
    if (v.outcome == "hang")
      for (const auto& w : where_it_waits(stacks_of(v), 2)) f.facts.push_back("  " + w);
    MethodReason reason = start_method_reason(v, c);
    // Else the known cause the run showed (the same shape under each method it failed under).
    if (reason.why.empty() && v.cause)
      reason.why = cause_shape(v.cause->rule) + " (" + v.cause->source + ")";
    if (!reason.why.empty()) {
      f.facts.push_back("  why: " + (said_under.count(reason.why)
                                         ? "as under " + said_under[reason.why]
                                         : reason.why));
      said_under.emplace(reason.why, name);
    }
    // Each distinct fix once, with the methods it is for: "fork: ...; spawn, forkserver: ...".
    if (const std::string fix = reason.fix.empty() ? one.fix : reason.fix; !fix.empty()) {
      auto same =
          std::find_if(fixes.begin(), fixes.end(), [&](const auto& x) { return x.second == fix; });
      if (same == fixes.end())
        fixes.emplace_back(name, fix);
      else
        same->first += ", " + name;
    }
  }
  for (const auto& [methods, fix] : fixes)
    f.fix += (f.fix.empty() ? "" : "; ") + methods + ": " + fix;
  // Where the program chose its own method and kept it, that part ran under it every time: the
  // runs do not show it safe under the others.
  // (Under its own method's run, forcing changes nothing and says nothing: the other runs tell.)
  std::string own;
  for (const Variant& v : c.variants)
    if (const std::string one = own_start_method_choice(v);
        !one.empty() && (own.empty() || one.find("(overridden") != std::string::npos))
      own = one;
  const bool kept_own = own.find("(kept there") != std::string::npos;
  if (!own.empty()) f.facts.push_back(own);
  const std::string note = default_method_note(report.run.environment);
  if (failed_under.empty() && kept_own)
    f.headline = "matrix: ok under " + ok_under +
                 ", but where the program names its own start method it ran under that one "
                 "each time (--force-start-method tries each there too)";
  else if (failed_under.empty())
    f.headline = "matrix: ok under " + ok_under +
                 ": safe under every start method, including Python 3.14's default";
  else
    f.headline =
        "matrix: fails under " + failed_under + (ok_under.empty() ? "" : "; ok under " + ok_under);
  f.facts.push_back(note);
  return f;
}

std::string subject_fix(const Case& c, const Variant& v) { return subject_finding(c, v).fix; }

Finding key_finding(const Report& report) {
  const auto& cases = report.cases;
  if (cases.size() == 1 && cases[0].variants.size() > 1) {
    bool all_subjects = true;
    for (const Variant& v : cases[0].variants) all_subjects = all_subjects && v.role == "subject";
    if (all_subjects) return matrix_finding(report, cases[0]);
  }
  if (cases.size() == 1 && cases[0].variants.size() == 1 && cases[0].variants[0].role == "subject")
    return subject_finding(cases[0], cases[0].variants[0]);
  return catalog_finding(report);
}

}  // namespace fc::reports
