#include "reports/python_view.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <set>
#include <sstream>

#include "reports/memory_text.h"
#include "reports/model/report_model_json.h"
#include "reports/report_view.h"
#include "reports/text.h"

namespace fc::reports {
namespace {

using json = nlohmann::json;

bool starts_with(const std::string& s, const std::string& prefix) {
  return !prefix.empty() && s.compare(0, prefix.size(), prefix) == 0;
}

const PythonPaths* paths_of(const std::optional<PythonPaths>& paths) {
  return paths ? &*paths : nullptr;
}

// The deepest frame (innermost: the last) in the user's own files, else the deepest.
const PythonFrame* deepest_users_frame(const std::vector<PythonFrame>& frames,
                                       const PythonPaths* paths) {
  if (frames.empty()) return nullptr;
  for (auto it = frames.rbegin(); it != frames.rend(); ++it)
    if (users_file(it->file, paths)) return &*it;
  return &frames.back();
}

const std::vector<PythonProcess>& processes_of(const Variant& variant) {
  static const std::vector<PythonProcess> none;
  return variant.python ? variant.python->processes : none;
}

const PythonProcess* process_by_pid(const Variant& variant, long long pid) {
  for (const auto& p : processes_of(variant))
    if (p.pid == pid) return &p;
  return nullptr;
}

// The deepest user frame of a crash dump: the thread that took the signal, else any.
std::string crash_where(const PythonProcess& process) {
  if (!process.crash) return "";
  const PythonCrashThread* chosen = nullptr;
  for (const auto& t : process.crash->threads)
    if (t.current || !chosen) chosen = &t;
  if (!chosen) return "";
  // faulthandler lists the innermost frame first.
  for (const auto& f : chosen->frames)
    if (users_file(f.file, paths_of(process.paths))) return python_frame_text(f);
  return chosen->frames.empty() ? "" : python_frame_text(chosen->frames.front());
}

std::string without_builtins(const std::string& type) {
  return starts_with(type, "builtins.") ? type.substr(9) : type;
}

}  // namespace

std::string python_frame_text(const PythonFrame& frame) {
  const std::string base = frame.file.substr(frame.file.find_last_of('/') + 1);
  return (base.empty() ? "?" : base) + (frame.line ? ":" + std::to_string(*frame.line) : "") +
         " in " + (frame.function.empty() ? "?" : frame.function);
}

bool users_file(const std::string& file, const PythonPaths* paths) {
  if (file.empty() || file[0] == '<') return file == "<string>" || file == "<stdin>";
  // forkcheck's own bootstrap is nobody's code but ours.
  if (file.find("/forkcheck_boot.py") != std::string::npos ||
      file.find("/forkcheck/python/sitecustomize.py") != std::string::npos)
    return false;
  if (paths) {
    auto under = [&](const std::string& dir) {
      return !dir.empty() && starts_with(file, dir + "/");
    };
    for (const std::string* dir :
         {&paths->stdlib, &paths->platstdlib, &paths->purelib, &paths->platlib})
      if (under(*dir)) return false;
    for (const auto& dir : paths->site_packages)  // every site-packages on sys.path
      if (under(dir)) return false;
    return true;
  }
  for (const char* lib : {"/site-packages/", "/dist-packages/"})
    if (file.find(lib) != std::string::npos) return false;
  const auto at = file.find("/lib/python");
  return at == std::string::npos;
}

std::optional<PythonError> traceback_in(const std::string& text) {
  const auto start = text.rfind("Traceback (most recent call last):");
  if (start == std::string::npos) return std::nullopt;
  std::istringstream in(text.substr(start));
  std::string line;
  std::getline(in, line);  // the header
  PythonError e;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (starts_with(line, "  File \"")) {
      const auto q = line.find('"', 8);
      const auto l = line.find(", line ", q);
      const auto f = line.find(", in ", l == std::string::npos ? q : l);
      if (q == std::string::npos || l == std::string::npos) continue;
      PythonFrame frame;
      frame.file = line.substr(8, q - 8);
      frame.line = std::atoi(line.c_str() + l + 7);
      frame.function = f == std::string::npos ? "?" : line.substr(f + 5);
      e.frames.push_back(std::move(frame));
    } else if (starts_with(line, "    ")) {
      // The source line of the frame above, or 3.11's carets under it.
      if (!e.frames.empty() && line.find_first_not_of(" ^~") != std::string::npos &&
          e.frames.back().code.empty())
        e.frames.back().code = line.substr(line.find_first_not_of(' '));
    } else if (!line.empty()) {
      const auto colon = line.find(": ");
      e.type = line.substr(0, colon);
      e.message = colon == std::string::npos ? "" : line.substr(colon + 2);
      break;
    }
  }
  if (e.type.empty()) return std::nullopt;
  return e;
}

const PythonProcess* main_python_process(const Variant& variant) {
  const PythonProcess* first = nullptr;
  for (const auto& p : processes_of(variant)) {
    if (variant.pid && p.pid == *variant.pid) return &p;
    if (p.born == "exec" && (!first || p.first_seen_s < first->first_seen_s)) first = &p;
  }
  return first;
}

std::optional<PythonError> program_error(const Variant& variant) {
  // It exited 0: a traceback on its stderr is a worker's, not its own.
  if (exited_zero_but_processes_failed(variant)) return std::nullopt;
  if (const PythonProcess* p = main_python_process(variant)) {
    for (auto it = p->exceptions.rbegin(); it != p->exceptions.rend(); ++it)
      if (it->where == "main") return PythonError{it->type, it->message, it->frames, p->paths};
  }
  return traceback_in(variant.stderr_text);
}

std::string traceback_text(const PythonError& e, size_t max_bytes) {
  auto frame_text = [](const PythonFrame& f) {
    std::string s = "  File \"" + f.file + "\", line " +
                    (f.line ? std::to_string(*f.line) : std::string()) + ", in " + f.function +
                    "\n";
    if (!f.code.empty()) s += "    " + f.code + "\n";
    return s;
  };
  const std::string type = without_builtins(e.type);
  const std::string last = type + (e.message.empty() ? "" : ": " + e.message) + "\n";
  std::string whole = "Traceback (most recent call last):\n";
  for (const auto& f : e.frames) whole += frame_text(f);
  if (whole.size() + last.size() <= max_bytes) return whole + last;
  // Too long: the library's frames go first, a run of them said in one line.
  std::string text = "Traceback (most recent call last):\n";
  size_t run = 0;
  auto flush = [&] {
    if (run) text += "  ... " + counted(run, "frame", "frames") + " in libraries\n";
    run = 0;
  };
  for (const auto& f : e.frames) {
    if (users_file(f.file, paths_of(e.paths))) {
      flush();
      text += frame_text(f);
    } else {
      ++run;
    }
  }
  flush();
  return cap_text(text, max_bytes > last.size() ? max_bytes - last.size() : 0) + last;
}

std::string error_headline(const Variant& variant) {
  const std::optional<PythonError> e = program_error(variant);
  if (!e) return "";
  const std::string type = without_builtins(e->type);
  const PythonFrame* where = deepest_users_frame(e->frames, paths_of(e->paths));
  return (where ? python_frame_text(*where) + ": " : std::string()) + type +
         (e->message.empty() ? "" : ": " + shorten(one_line(e->message), 200));
}

std::string crash_line(const Variant& variant, int pid) {
  const PythonProcess* p = pid == 0 ? main_python_process(variant) : process_by_pid(variant, pid);
  return p ? crash_where(*p) : "";
}

namespace {

// A spawned multiprocessing worker runs `python -c "from multiprocessing.spawn import ..."
// --multiprocessing-fork`: its "<string>" frame is multiprocessing's, not the user's -c.
std::vector<PythonFrame> own_frames(const PythonProcess& process,
                                    const std::vector<PythonFrame>& frames) {
  const bool spawned = std::find(process.argv.begin(), process.argv.end(),
                                 "--multiprocessing-fork") != process.argv.end();
  if (!spawned) return frames;
  std::vector<PythonFrame> kept;
  for (const auto& f : frames)
    if (f.file != "<string>") kept.push_back(f);
  return kept;
}

// When a process of the tree was last seen alive by the Python side (its events connection
// closed), else when its parent learnt of its end; -1 when neither is known.
double ended_at_s(const Variant& variant, int pid) {
  if (const PythonProcess* p = process_by_pid(variant, pid); p && p->gone_s) return *p->gone_s;
  for (const auto& p : processes_of(variant))
    for (const auto& c : p.child_exits)
      if (c.pid == pid && c.at_s) return *c.at_s;
  return -1;
}

// The first of forkcheck's look signals to `pid` in died_after_look's window before its death by
// a signal, else nullptr.
const LookSignal* look_before_death(const Variant& variant, int pid) {
  constexpr double kWindowS = 2.0;  // harness/supervise/watchdog_record.h: kDeathAfterLookS
  const double ended = ended_at_s(variant, pid);
  if (ended < 0) return nullptr;
  for (const LookSignal& l : variant.watchdog.look_signals)
    if (l.pid == pid) {
      const double after = ended - l.at_s;
      if (after >= 0 && after <= kWindowS) return &l;
    }
  return nullptr;
}

bool died_of_a_signal(const DescendantEnd& d) {
  return starts_with(d.how, "killed by") || starts_with(d.how, "crashed");
}

std::string where_text(const std::optional<PythonFrame>& where) {
  return where ? " at " + python_frame_text(*where) : "";
}

// Why process `pid`, whose end its parent learnt (`parent`: the parent's facts, `exit`: the end
// as Python says it), was dealt with by the program: "" when nothing shows that it was.
std::string handled_end(const Variant& variant, const PythonProcess& parent,
                        const PythonChildExit& exit, int pid, long long code, bool& only_looked) {
  only_looked = false;
  // Ended as the program asked (Process.terminate(), kill(); a Pool's exit terminates its
  // workers).
  const std::string& asked = exit.asked;
  if ((asked == "terminate" && code == -15) || (asked == "kill" && code == -9)) {
    for (const auto& a : parent.ends_asked)
      if (a.child == pid) {
        // A Pool or an executor ending its workers from its own thread has no line of the
        // program's: the library is named.
        const bool library =
            a.by.rfind("multiprocessing.", 0) == 0 || a.by.rfind("concurrent.", 0) == 0;
        if (!a.where && library)
          return "ended by " + a.by + "'s " + asked + "(), a library the program uses";
        return "ended as the program asked: " + asked + "()" + where_text(a.where);
      }
    return "ended as the program asked: " + asked + "()";
  }
  // By a signal a process of the program sent it (to it, or to the group it leads). Killed by
  // another signal, it failed all the same.
  if (code < 0)
    for (const auto& p : processes_of(variant))
      for (const auto& x : p.signals_sent)
        if (x.to && x.signal && std::llabs(*x.to) == pid && *x.signal == -code)
          return "ended by the " + or_else(exit.signal, "signal " + std::to_string(-code)) +
                 " that pid " + (p.pid ? std::to_string(*p.pid) : std::string()) + " sent" +
                 where_text(x.where);
  // Its end looked at: its exit code read, or handed to the program by subprocess.
  only_looked = true;
  for (const auto& l : parent.ends_looked)
    if (l.child == pid) {
      const std::string where = where_text(l.where);
      if (l.via == "exitcode") return "the program read its exit code (Process.exitcode)" + where;
      if (l.via == "returncode")
        return "the program read its exit status (Popen.returncode)" + where;
      return "subprocess's " + l.via + "() gave the program its exit status" + where;
    }
  // A worker whose death broke a ProcessPoolExecutor: the program's futures got the error.
  for (const auto& b : parent.pools_broken)
    for (long long w : b.workers)
      if (w == pid)
        return "its end broke the ProcessPoolExecutor, which raised BrokenProcessPool to the "
               "program";
  only_looked = false;
  return "";
}

std::vector<DescendantEnd> ended_descendants(const Variant& variant) {
  std::vector<DescendantEnd> out;
  const PythonProcess* main = main_python_process(variant);
  const long long main_pid = main && main->pid ? *main->pid : 0;
  auto entry = [&](int pid) -> DescendantEnd& {
    for (auto& d : out)
      if (d.pid == pid) return d;
    DescendantEnd d;
    d.pid = pid;
    out.push_back(d);
    return out.back();
  };
  const auto test_name = [](const std::optional<PythonTest>& t) {
    return t ? t->name : std::string();
  };
  std::set<long long> ends_learnt;  // by a Python parent
  const auto& processes = processes_of(variant);
  for (const auto& p : processes) {
    // What each parent learnt of its children's ends.
    for (const auto& c : p.child_exits) {
      if (!c.pid || *c.pid == main_pid) continue;
      const int pid = static_cast<int>(*c.pid);
      ends_learnt.insert(pid);
      if (!c.returncode || *c.returncode == 0) continue;
      const long long code = *c.returncode;
      DescendantEnd& d = entry(pid);
      d.what =
          c.name +
          (c.target.empty() ? "" : (c.name.empty() ? "" : " ") + std::string("(") + c.target + ")");
      d.how = code < 0 ? "killed by " + or_else(c.signal, "signal " + std::to_string(-code))
                       : "exit status " + std::to_string(code);
      // SIGKILL: the kernel's OOM killer, where its log names this pid (or its counters rose).
      if (code == -9) {
        if (oom_killed(variant, pid))
          d.how = "killed by SIGKILL, sent by " + oom_kill_text(variant, pid);
        else if (const std::string perhaps = oom_kill_text(variant, pid); !perhaps.empty())
          d.how += " (" + perhaps + ")";
      }
      d.memory = process_memory_text(variant, pid);
      d.not_counted = handled_end(variant, p, c, pid, code, d.only_looked);
      d.ended_by_program = !d.not_counted.empty() && !d.only_looked;
      d.test = test_name(c.test);
    }
  }
  for (const auto& p : processes) {
    // What a process said of its own end: its target raised, or it crashed.
    const int pid = p.pid ? static_cast<int>(*p.pid) : 0;
    if (pid == main_pid) continue;
    for (const auto& x : p.exceptions) {
      if (x.where != "process" && x.where != "main" && x.where != "exit") continue;
      DescendantEnd& d = entry(pid);
      const std::string type = without_builtins(x.type);
      // An os._exit(N) of the program's own (the bootstrap's "exit"), else what it raised.
      d.how = (x.where == "exit"
                   ? "called " + type + "(" + x.message + ")"
                   : "raised " + type +
                         (x.message.empty() ? "" : ": " + shorten(one_line(x.message), 160))) +
              (d.how.empty() ? "" : " (" + d.how + ")");
      if (d.what.empty()) d.what = x.process_name;
      if (!test_name(x.test).empty()) d.test = test_name(x.test);
      const std::vector<PythonFrame> frames = own_frames(p, x.frames);
      // Only a frame of the user's: a worker that failed inside multiprocessing has none.
      if (const PythonFrame* f = deepest_users_frame(frames, paths_of(p.paths));
          f && users_file(f->file, paths_of(p.paths)))
        d.where = python_frame_text(*f);
    }
    if (p.crash) {
      DescendantEnd& d = entry(pid);
      if (d.memory.empty()) d.memory = process_memory_text(variant, pid);
      if (!test_name(p.test).empty()) d.test = test_name(p.test);
      const PythonCrash& crash = *p.crash;
      if (d.how.empty()) d.how = "crashed: " + crash.fatal;
      d.where = crash_where(p);
      const std::string& over = crash.rearmed_over;
      if (!d.where.empty())
        d.where_from = "the line from " + or_else(crash.dumped_by, "faulthandler") + "'s dump" +
                       (crash.written_to == "stderr" ? " in its stderr" : "") +
                       (over.empty() ? ""
                                     : ", which forkcheck armed again after " + over +
                                           " had put its own handlers over it");
    }
  }
  // An end no Python parent learnt: one whose parent is not a Python process of the tree (a
  // shell, a C++ launcher) may have been looked at there, unseen.
  for (auto& d : out) {
    if (!d.not_counted.empty() || ends_learnt.count(d.pid)) continue;
    const PythonProcess* p = process_by_pid(variant, d.pid);
    if (!p || !p->ppid || process_by_pid(variant, *p->ppid)) continue;
    d.parent_unseen = true;
    d.not_counted = "its parent (pid " + std::to_string(*p->ppid) +
                    ") is not a Python process forkcheck's bootstrap is in, so whether it looked "
                    "at this end cannot be seen (--worker-failures fail counts it)";
  }
  // Died of a signal just after forkcheck signalled it to look at it.
  for (auto& d : out) {
    if (!d.not_counted.empty() || !died_of_a_signal(d)) continue;
    if (const LookSignal* look = look_before_death(variant, d.pid)) {
      d.after_look = true;
      d.not_counted = format_seconds(ended_at_s(variant, d.pid) - look->at_s) +
                      " after forkcheck " + look->what + ": forkcheck may have caused it";
    }
  }
  // The run's own choice (--worker-failures; matrix's default is fail): count every end the
  // program did not cause itself, or none.
  const std::string mode = field(variant.details, "worker_failures");
  for (auto& d : out) {
    if (mode == "fail" && (d.parent_unseen || d.only_looked)) d.not_counted.clear();
    if (mode == "report" && d.not_counted.empty())
      d.not_counted = "--worker-failures report: a failed worker is reported, not counted";
  }
  return out;
}

}  // namespace

std::vector<DescendantEnd> failed_descendants(const Variant& variant) {
  std::vector<DescendantEnd> out;
  for (auto& d : ended_descendants(variant))
    if (d.not_counted.empty()) out.push_back(std::move(d));
  return out;
}

std::vector<DescendantEnd> ended_badly(const Variant& variant) {
  std::vector<DescendantEnd> out;
  for (auto& d : ended_descendants(variant))
    if (!d.ended_by_program && !d.after_look) out.push_back(std::move(d));
  return out;
}

std::vector<DescendantEnd> uncounted_descendants(const Variant& variant) {
  std::vector<DescendantEnd> out;
  for (auto& d : ended_descendants(variant))
    if (!d.not_counted.empty()) out.push_back(std::move(d));
  return out;
}

std::string deaths_after_look_text(const Variant& variant) {
  std::string s;
  for (const auto& d : ended_descendants(variant)) {
    const LookSignal* look = died_of_a_signal(d) ? look_before_death(variant, d.pid) : nullptr;
    if (!look || !d.after_look) continue;
    const double after = ended_at_s(variant, d.pid) - look->at_s;
    s += (s.empty() ? "" : "; ") + std::string("pid ") + std::to_string(d.pid) +
         (d.what.empty() ? "" : " " + d.what) + " " + d.how + " " + format_seconds(after) +
         " after forkcheck " + look->what +
         ": forkcheck may have caused it, so it is not counted as the program's failure";
  }
  return s;
}

bool fork_entry_covers(std::optional<long long> first, std::optional<long long> last,
                       std::optional<long long> seq) {
  if (!seq || !first) return false;
  return *seq == *first || (last && *seq > *first && *seq <= *last);
}

bool fork_entry_covers(const PythonFork& fork, std::optional<long long> seq) {
  return fork_entry_covers(fork.seq, fork.last_seq, seq);
}

const PythonFork* fork_with_threads_that_made(const Variant& variant, int pid,
                                              const PythonProcess** parent_of) {
  const auto& processes = processes_of(variant);
  for (const auto& child : processes) {
    if (child.pid != pid || child.born != "fork") continue;
    for (const auto& parent : processes) {
      if (!parent.pid || parent.pid != child.ppid) continue;
      for (const auto& fork : parent.forks) {
        if (!fork_entry_covers(fork, child.fork_seq) || fork.threads.empty()) continue;
        if (parent_of) *parent_of = &parent;
        return &fork;
      }
    }
  }
  return nullptr;
}

std::optional<bool> forked_by_multiprocessing(const PythonFork& fork) {
  if (fork.stack.empty()) return std::nullopt;
  for (const auto& frame : fork.stack)
    if (frame.file.find("/multiprocessing/") != std::string::npos) return true;
  return false;
}

std::string fork_with_threads(const Variant& variant, int pid) {
  const PythonProcess* parent = nullptr;
  const PythonFork* fork = fork_with_threads_that_made(variant, pid, &parent);
  if (!fork) return "";
  const PythonFrame* at = deepest_users_frame(fork->stack, paths_of(parent->paths));
  const auto& threads = fork->threads;
  std::string s = "was forked" + (at ? " at " + python_frame_text(*at) : std::string()) +
                  " by pid " + std::to_string(*parent->pid) + " while " +
                  std::to_string(threads.size()) + " other thread" +
                  (threads.size() == 1 ? "" : "s") + " ran there: ";
  for (size_t i = 0; i < threads.size() && i < 3; ++i)
    s += (i == 0 ? "" : ", ") + std::string("\"") + threads[i].name + "\"" +
         (threads[i].started_at ? " (started at " + python_frame_text(*threads[i].started_at) + ")"
                                : "");
  if (threads.size() > 3) s += " and " + std::to_string(threads.size() - 3) + " more";
  return s;
}

std::string own_start_method_choice(const Variant& variant) {
  for (const auto& p : processes_of(variant))
    for (const auto& m : p.start_methods) {
      if (!m.where) continue;
      return "the program names its own start method: " + m.method + " at " +
             python_frame_text(*m.where) +
             (m.overridden_by.empty()
                  ? " (kept there: --force-start-method imposes the method there too)"
                  : " (overridden there by --force-start-method: " + m.overridden_by + ")");
    }
  return "";
}

std::string descendant_text(const DescendantEnd& d) {
  return "pid " + std::to_string(d.pid) + (d.what.empty() ? "" : " " + d.what) + " " + d.how +
         (d.where.empty() ? "" : " at " + d.where) + (d.test.empty() ? "" : " during " + d.test);
}

std::string python_drops_text(const Variant& variant) {
  if (!variant.python) return "";
  const PythonSide& python = *variant.python;
  const long long quiet = python.quiet_folded.value_or(0);
  if (python.dropped_by.empty() && quiet <= 0) return "";
  const auto bound = [&](const char* key) {
    const auto it = python.bounds.find(key);
    return it == python.bounds.end() ? std::string() : std::to_string(it->second);
  };
  std::string s;
  // Not lost: counted. Their ends were ordinary and nothing else names them.
  if (quiet > 0)
    s = std::to_string(quiet) + " Python processes that had ended quietly (no exception, crash, " +
        "exit status but 0, fork or child told; not forked beside other threads) were folded " +
        "into this count to keep the " + bound("processes") + " heard at once";
  for (const auto& [why, n] : python.dropped_by) {
    if (n <= 0) continue;
    const std::string count = std::to_string(n);
    std::string said;
    if (why == "fork")
      said = count + " forks past the " + bound("forks") + " kept of a process (" +
             bound("threaded_forks") + " of those made beside other threads)";
    else if (why == "process" || why == "connection")
      said = count + " Python processes past the " + bound("processes") +
             " heard (those went unheard" +
             (why == "connection" ? ", their connections refused" : "") + ")";
    else if (why == "exception")
      said = count + " exceptions past the " + bound("exceptions") + " kept of a process";
    else if (why == "child_exit")
      said = count + " children's ends past the " + bound("child_exits") +
             " kept of a process (not judged failed or handled)";
    else if (why == "malformed")
      said = count + " lines not in forkcheck's protocol";
    else
      said = count + " " + why + " events past their bound";
    s += (s.empty() ? "" : "; ") + said;
  }
  return s.empty() ? "" : "not kept of what the Python side told: " + s;
}

std::string running_test(const Variant& variant, int pid) {
  const PythonProcess* p = pid ? process_by_pid(variant, pid) : main_python_process(variant);
  return p && p->test ? p->test->name : "";
}

std::string descendants_failure(const Variant& variant) {
  const auto failed = failed_descendants(variant);
  if (failed.empty()) return "";
  std::string s = failed.size() == 1 ? "a process of it failed: "
                                     : std::to_string(failed.size()) + " processes of it failed: ";
  constexpr size_t kNamed = 4;
  for (size_t i = 0; i < failed.size() && i < kNamed; ++i) {
    s += (i ? "; " : "") + descendant_text(failed[i]);
  }
  if (failed.size() > kNamed) s += "; and " + std::to_string(failed.size() - kNamed) + " more";
  return s;
}

std::string descendants_failure_count(const Variant& variant) {
  const std::string all = descendants_failure(variant);
  return all.substr(0, all.find(": "));
}

bool exited_zero_but_processes_failed(const Variant& variant) {
  // Not a hang or a timeout whose program then exited 0 from its SIGTERM handler: forkcheck
  // ended it, and that is its end.
  return variant.role == "subject" && (variant.outcome == "ok" || variant.outcome == "error") &&
         !variant.harness_error && variant.exit.code == 0 && !variant.exit.signal &&
         !failed_descendants(variant).empty();
}

void mark_processes_failed(json& record) {
  const Variant variant = read_variant(record);
  if (variant.outcome != "ok" || !exited_zero_but_processes_failed(variant)) return;
  const std::string failed = "exited 0, but " + descendants_failure(variant);
  // What the message said besides "exited 0" stays ("exited 0; watch: 2 forks, 2 hazardous").
  std::string message = variant.message;
  if (message.rfind("exited 0", 0) == 0) message = message.substr(8);
  record["outcome"] = "error";
  record["message"] = failed + (message.empty() || message[0] == ';' ? message : "; " + message);
}

}  // namespace fc::reports
