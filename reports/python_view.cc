#include "reports/python_view.h"

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

// The deepest frame (innermost: the last) in the user's own files, else the deepest.
const json* deepest_users_frame(const json& frames, const json& paths) {
  if (!frames.is_array() || frames.empty()) return nullptr;
  for (auto it = frames.rbegin(); it != frames.rend(); ++it)
    if (users_file(field(*it, "file"), paths)) return &*it;
  return &frames.back();
}

const json* process_by_pid(const Variant& variant, int pid) {
  for (const auto& p : list(variant.python, "processes"))
    if (member(p, "pid") == pid) return &p;
  return nullptr;
}

// The deepest user frame of a crash dump: the thread that took the signal, else any.
std::string crash_where(const json& process) {
  const json& crash = member(process, "crash");
  const json& threads = list(crash, "threads");
  const json* chosen = nullptr;
  for (const auto& t : threads)
    if (member(t, "current") == true || !chosen) chosen = &t;
  if (!chosen) return "";
  // faulthandler lists the innermost frame first.
  for (const auto& f : list(*chosen, "frames"))
    if (users_file(field(f, "file"), member(process, "paths"))) return python_frame_text(f);
  const json& frames = list(*chosen, "frames");
  return frames.empty() ? "" : python_frame_text(frames[0]);
}

}  // namespace

std::string python_frame_text(const PythonFrame& frame) {
  const std::string base = frame.file.substr(frame.file.find_last_of('/') + 1);
  return (base.empty() ? "?" : base) + (frame.line ? ":" + std::to_string(*frame.line) : "") +
         " in " + (frame.function.empty() ? "?" : frame.function);
}

std::string python_frame_text(const json& frame) {
  return python_frame_text(read_as<PythonFrame>(frame));
}

bool users_file(const std::string& file, const json& paths) {
  if (file.empty() || file[0] == '<') return file == "<string>" || file == "<stdin>";
  // forkcheck's own bootstrap is nobody's code but ours.
  if (file.find("/forkcheck_boot.py") != std::string::npos ||
      file.find("/forkcheck/python/sitecustomize.py") != std::string::npos)
    return false;
  if (paths.is_object()) {
    auto under = [&](const std::string& dir) {
      return !dir.empty() && starts_with(file, dir + "/");
    };
    for (const char* key : {"stdlib", "platstdlib", "purelib", "platlib"})
      if (under(field(paths, key))) return false;
    for (const auto& dir : list(paths, "site_packages"))  // every site-packages on sys.path
      if (dir.is_string() && under(dir.get<std::string>())) return false;
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
      json frame = {{"file", line.substr(8, q - 8)},
                    {"line", std::atoi(line.c_str() + l + 7)},
                    {"function", f == std::string::npos ? "?" : line.substr(f + 5)}};
      e.frames.push_back(std::move(frame));
    } else if (starts_with(line, "    ")) {
      // The source line of the frame above, or 3.11's carets under it.
      if (!e.frames.empty() && line.find_first_not_of(" ^~") != std::string::npos &&
          !e.frames.back().contains("code"))
        e.frames.back()["code"] = line.substr(line.find_first_not_of(' '));
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

const json* main_python_process(const Variant& variant) {
  const json& processes = list(variant.python, "processes");
  const json* first = nullptr;
  for (const auto& p : processes) {
    if (variant.pid && member(p, "pid") == *variant.pid) return &p;
    if (member(p, "born") == "exec" &&
        (!first || member(p, "first_seen_s") < member(*first, "first_seen_s")))
      first = &p;
  }
  return first;
}

std::optional<PythonError> program_error(const Variant& variant) {
  // It exited 0: a traceback on its stderr is a worker's, not its own.
  if (exited_zero_but_processes_failed(variant)) return std::nullopt;
  if (const json* p = main_python_process(variant)) {
    const json& errors = list(*p, "exceptions");
    for (auto it = errors.rbegin(); it != errors.rend(); ++it)
      if (field(*it, "where") == "main")
        return PythonError{field(*it, "type"), field(*it, "message"), list(*it, "frames"),
                           member(*p, "paths")};
  }
  return traceback_in(variant.stderr_text);
}

std::string traceback_text(const PythonError& e, size_t max_bytes) {
  auto frame_text = [](const json& f) {
    std::string s = "  File \"" + field(f, "file") + "\", line " + display(member(f, "line")) +
                    ", in " + field(f, "function") + "\n";
    if (!field(f, "code").empty()) s += "    " + field(f, "code") + "\n";
    return s;
  };
  std::string type = e.type;
  if (starts_with(type, "builtins.")) type = type.substr(9);
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
    if (users_file(field(f, "file"), e.paths)) {
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
  std::string type = e->type;
  if (starts_with(type, "builtins.")) type = type.substr(9);
  const json* where = deepest_users_frame(e->frames, e->paths);
  return (where ? python_frame_text(*where) + ": " : std::string()) + type +
         (e->message.empty() ? "" : ": " + shorten(one_line(e->message), 200));
}

std::string crash_line(const Variant& variant, int pid) {
  const json* p = pid == 0 ? main_python_process(variant) : process_by_pid(variant, pid);
  return p ? crash_where(*p) : "";
}

// A spawned multiprocessing worker runs `python -c "from multiprocessing.spawn import ..."
// --multiprocessing-fork`: its "<string>" frame is multiprocessing's, not the user's -c.
json own_frames(const json& process, const json& frames) {
  const json& argv = member(process, "argv");
  bool spawned = false;
  for (const auto& a : argv.is_array() ? argv : json::array())
    spawned = spawned || (a.is_string() && a.get<std::string>() == "--multiprocessing-fork");
  if (!spawned) return frames;
  json kept = json::array();
  for (const auto& f : frames)
    if (field(f, "file") != "<string>") kept.push_back(f);
  return kept;
}

namespace {

// When a process of the tree was last seen alive by the Python side (its events connection
// closed), else when its parent learnt of its end; -1 when neither is known.
double ended_at_s(const Variant& variant, int pid) {
  if (const json* p = process_by_pid(variant, pid); p && member(*p, "gone_s").is_number())
    return member(*p, "gone_s").get<double>();
  for (const auto& p : list(variant.python, "processes"))
    for (const auto& c : list(p, "child_exits"))
      if (member(c, "pid") == pid && member(c, "at_s").is_number())
        return member(c, "at_s").get<double>();
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

std::string where_text(const json& where) {
  return where.is_object() ? " at " + python_frame_text(where) : "";
}

// Why process `pid`, whose end its parent learnt (`parent`: the parent's facts, `code`: the end
// as Python says it), was dealt with by the program: "" when nothing shows that it was.
std::string handled_end(const Variant& variant, const json& parent, const json& exit, int pid,
                        int code, bool& only_looked) {
  only_looked = false;
  // Ended as the program asked (Process.terminate(), kill(); a Pool's exit terminates its
  // workers).
  const std::string asked = field(exit, "asked");
  if ((asked == "terminate" && code == -15) || (asked == "kill" && code == -9)) {
    for (const auto& a : list(parent, "ends_asked"))
      if (member(a, "child") == pid) {
        // A Pool or an executor ending its workers from its own thread has no line of the
        // program's: the library is named.
        const std::string by = field(a, "by");
        const bool library =
            by.rfind("multiprocessing.", 0) == 0 || by.rfind("concurrent.", 0) == 0;
        if (!member(a, "where").is_object() && library)
          return "ended by " + by + "'s " + asked + "(), a library the program uses";
        return "ended as the program asked: " + asked + "()" + where_text(member(a, "where"));
      }
    return "ended as the program asked: " + asked + "()";
  }
  // By a signal a process of the program sent it (to it, or to the group it leads). Killed by
  // another signal, it failed all the same.
  if (code < 0)
    for (const auto& p : list(variant.python, "processes"))
      for (const auto& x : list(p, "signals_sent")) {
        const json &to = member(x, "to"), &sig = member(x, "signal");
        if (to.is_number_integer() && sig.is_number_integer() &&
            std::llabs(to.get<long long>()) == pid && sig.get<long long>() == -code)
          return "ended by the " + field(exit, "signal", "signal " + std::to_string(-code)) +
                 " that pid " + field(p, "pid") + " sent" + where_text(member(x, "where"));
      }
  // Its end looked at: its exit code read, or handed to the program by subprocess.
  only_looked = true;
  for (const auto& l : list(parent, "ends_looked"))
    if (member(l, "child") == pid) {
      const std::string via = field(l, "via");
      const std::string where = where_text(member(l, "where"));
      if (via == "exitcode") return "the program read its exit code (Process.exitcode)" + where;
      if (via == "returncode") return "the program read its exit status (Popen.returncode)" + where;
      return "subprocess's " + via + "() gave the program its exit status" + where;
    }
  // A worker whose death broke a ProcessPoolExecutor: the program's futures got the error.
  for (const auto& b : list(parent, "pools_broken"))
    for (const auto& w : list(b, "workers"))
      if (w == pid)
        return "its end broke the ProcessPoolExecutor, which raised BrokenProcessPool to the "
               "program";
  only_looked = false;
  return "";
}

std::vector<DescendantEnd> ended_descendants(const Variant& variant) {
  std::vector<DescendantEnd> out;
  const json* main = main_python_process(variant);
  const int main_pid =
      main && member(*main, "pid").is_number() ? member(*main, "pid").get<int>() : 0;
  auto entry = [&](int pid) -> DescendantEnd& {
    for (auto& d : out)
      if (d.pid == pid) return d;
    DescendantEnd d;
    d.pid = pid;
    out.push_back(d);
    return out.back();
  };
  std::set<int> ends_learnt;  // by a Python parent
  const auto& processes = list(variant.python, "processes");
  for (const auto& p : processes) {
    // What each parent learnt of its children's ends.
    for (const auto& c : list(p, "child_exits")) {
      const json& code = member(c, "returncode");
      if (!member(c, "pid").is_number_integer() || member(c, "pid") == main_pid) continue;
      const int pid = c["pid"].get<int>();
      ends_learnt.insert(pid);
      if (!code.is_number_integer() || code.get<int>() == 0) continue;
      DescendantEnd& d = entry(pid);
      const std::string name = field(c, "name"), target = field(c, "target");
      d.what = name +
               (target.empty() ? "" : (name.empty() ? "" : " ") + std::string("(") + target + ")");
      d.how = code.get<int>() < 0
                  ? "killed by " + field(c, "signal", "signal " + std::to_string(-code.get<int>()))
                  : "exit status " + display(code);
      // SIGKILL: the kernel's OOM killer, where its log names this pid (or its counters rose).
      if (code.get<int>() == -9) {
        if (oom_killed(variant, pid))
          d.how = "killed by SIGKILL, sent by " + oom_kill_text(variant, pid);
        else if (const std::string perhaps = oom_kill_text(variant, pid); !perhaps.empty())
          d.how += " (" + perhaps + ")";
      }
      d.memory = process_memory_text(variant, pid);
      d.not_counted = handled_end(variant, p, c, pid, code.get<int>(), d.only_looked);
      d.ended_by_program = !d.not_counted.empty() && !d.only_looked;
      d.test = field(member(c, "test"), "name");
    }
  }
  for (const auto& p : processes) {
    // What a process said of its own end: its target raised, or it crashed.
    const int pid = member(p, "pid").is_number() ? p["pid"].get<int>() : 0;
    if (pid == main_pid) continue;
    for (const auto& x : list(p, "exceptions")) {
      const std::string where = field(x, "where");
      if (where != "process" && where != "main" && where != "exit") continue;
      DescendantEnd& d = entry(pid);
      std::string type = field(x, "type");
      if (starts_with(type, "builtins.")) type = type.substr(9);
      // An os._exit(N) of the program's own (the bootstrap's "exit"), else what it raised.
      d.how = (where == "exit" ? "called " + type + "(" + field(x, "message") + ")"
                               : "raised " + type +
                                     (field(x, "message").empty()
                                          ? ""
                                          : ": " + shorten(one_line(field(x, "message")), 160))) +
              (d.how.empty() ? "" : " (" + d.how + ")");
      if (d.what.empty()) d.what = field(x, "process_name");
      if (!field(member(x, "test"), "name").empty()) d.test = field(member(x, "test"), "name");
      const json frames = own_frames(p, list(x, "frames"));  // lives as long as f points into it
      // Only a frame of the user's: a worker that failed inside multiprocessing has none.
      if (const json* f = deepest_users_frame(frames, member(p, "paths"));
          f && users_file(field(*f, "file"), member(p, "paths")))
        d.where = python_frame_text(*f);
    }
    if (member(p, "crash").is_object()) {
      DescendantEnd& d = entry(pid);
      if (d.memory.empty()) d.memory = process_memory_text(variant, pid);
      if (!field(member(p, "test"), "name").empty()) d.test = field(member(p, "test"), "name");
      const json& crash = member(p, "crash");
      if (d.how.empty()) d.how = "crashed: " + field(crash, "fatal");
      d.where = crash_where(p);
      const std::string over = field(crash, "rearmed_over");
      if (!d.where.empty())
        d.where_from = "the line from " + field(crash, "dumped_by", "faulthandler") + "'s dump" +
                       (field(crash, "written_to") == "stderr" ? " in its stderr" : "") +
                       (over.empty() ? ""
                                     : ", which forkcheck armed again after " + over +
                                           " had put its own handlers over it");
    }
  }
  // An end no Python parent learnt: one whose parent is not a Python process of the tree (a
  // shell, a C++ launcher) may have been looked at there, unseen.
  for (auto& d : out) {
    if (!d.not_counted.empty() || ends_learnt.count(d.pid)) continue;
    const json* p = process_by_pid(variant, d.pid);
    const json& ppid = p ? member(*p, "ppid") : json();
    if (!ppid.is_number_integer() || process_by_pid(variant, ppid.get<int>())) continue;
    d.parent_unseen = true;
    d.not_counted = "its parent (pid " + display(ppid) +
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

bool fork_entry_covers(const json& fork, const json& seq) {
  const json& first = member(fork, "seq");
  if (!seq.is_number_integer() || !first.is_number_integer()) return false;
  const json& last = member(fork, "last_seq");
  const long long n = seq.get<long long>(), from = first.get<long long>();
  return n == from || (last.is_number_integer() && n > from && n <= last.get<long long>());
}

std::string fork_with_threads(const Variant& variant, int pid) {
  const auto& processes = list(variant.python, "processes");
  for (const auto& child : processes) {
    if (member(child, "pid") != pid || field(child, "born") != "fork") continue;
    for (const auto& parent : processes) {
      if (member(parent, "pid") != member(child, "ppid")) continue;
      for (const auto& fork : list(parent, "forks")) {
        if (!fork_entry_covers(fork, member(child, "fork_seq")) || list(fork, "threads").empty())
          continue;
        const json* at = deepest_users_frame(list(fork, "stack"), member(parent, "paths"));
        const auto& threads = list(fork, "threads");
        std::string s = "was forked" + (at ? " at " + python_frame_text(*at) : std::string()) +
                        " by pid " + field(parent, "pid") + " while " +
                        std::to_string(threads.size()) + " other thread" +
                        (threads.size() == 1 ? "" : "s") + " ran there: ";
        for (size_t i = 0; i < threads.size() && i < 3; ++i) {
          const json& started = member(threads[i], "started_at");
          s += (i == 0 ? "" : ", ") + std::string("\"") + field(threads[i], "name") + "\"" +
               (started.is_object() ? " (started at " + python_frame_text(started) + ")" : "");
        }
        if (threads.size() > 3) s += " and " + std::to_string(threads.size() - 3) + " more";
        return s;
      }
    }
  }
  return "";
}

std::string own_start_method_choice(const Variant& variant) {
  for (const auto& p : list(variant.python, "processes"))
    for (const auto& m : list(p, "start_methods")) {
      const json& where = member(m, "where");
      if (!where.is_object()) continue;
      const std::string over = field(m, "overridden_by");
      return "the program names its own start method: " + field(m, "method") + " at " +
             python_frame_text(where) +
             (over.empty() ? " (kept there: --force-start-method imposes the method there too)"
                           : " (overridden there by --force-start-method: " + over + ")");
    }
  return "";
}

std::string descendant_text(const DescendantEnd& d) {
  return "pid " + std::to_string(d.pid) + (d.what.empty() ? "" : " " + d.what) + " " + d.how +
         (d.where.empty() ? "" : " at " + d.where) + (d.test.empty() ? "" : " during " + d.test);
}

std::string python_drops_text(const Variant& variant) {
  const json& python = variant.python;
  const json& by = member(python, "dropped_by");
  const json& bounds = member(python, "bounds");
  const json& folded = member(python, "quiet_folded");
  const std::size_t quiet =
      folded.is_number_unsigned() ? folded.get<std::size_t>() : std::size_t{0};
  if ((!by.is_object() || by.empty()) && quiet == 0) return "";
  const auto bound = [&](const char* key) { return display(member(bounds, key)); };
  std::string s;
  // Not lost: counted. Their ends were ordinary and nothing else names them.
  if (quiet > 0)
    s = std::to_string(quiet) + " Python processes that had ended quietly (no exception, crash, " +
        "exit status but 0, fork or child told; not forked beside other threads) were folded " +
        "into this count to keep the " + bound("processes") + " heard at once";
  for (const auto& [why, n] : by.items()) {
    if (!n.is_number_unsigned() || n.get<std::size_t>() == 0) continue;
    const std::string count = std::to_string(n.get<std::size_t>());
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
  const json* p = pid ? process_by_pid(variant, pid) : main_python_process(variant);
  return p ? field(member(*p, "test"), "name") : "";
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
