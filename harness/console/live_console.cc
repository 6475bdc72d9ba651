#include "harness/console/live_console.h"

#include "harness/supervise/watchdog_record.h"

#include <cstdio>

#include "harness/platform/host.h"
#include "harness/stacks/stacks.h"
#include "harness/supervise/watchdog_record.h"
#include "reports/finding.h"
#include "reports/memory_text.h"
#include "reports/model/report_model_json.h"
#include "reports/text.h"
#include "reports/watchdog_text.h"

namespace fc::harness {
namespace {

constexpr int kStdout = 1, kStderr = 2;

// Written by length (a NUL shown escaped is text), at once, and never waiting on a reader that
// does not keep up: what does not fit now is dropped and counted (the reports have it all). A
// closed stdout stops the console, never the run (SIGPIPE is ignored).
std::size_t g_dropped[3] = {0, 0, 0};

void write_all(int fd, const std::string& s) {
  std::fflush(fd == kStdout ? stdout : stderr);  // what forkcheck printf'd comes first
  if (g_dropped[fd] > 0) {
    const std::string note = "\n[forkcheck: " + std::to_string(g_dropped[fd]) +
                             " bytes not shown here: the reader did not keep up; the reports "
                             "have everything]\n";
    if (write_what_fits(fd, note.data(), note.size()) == note.size()) g_dropped[fd] = 0;
  }
  g_dropped[fd] += s.size() - write_what_fits(fd, s.data(), s.size());
}

// How many bytes at the end of `s` start a UTF-8 sequence that the next read completes.
size_t incomplete_tail(const std::string& s) {
  for (size_t back = 1; back <= 3 && back <= s.size(); ++back) {
    const auto b = static_cast<unsigned char>(s[s.size() - back]);
    if ((b & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const size_t need = (b & 0xE0) == 0xC0   ? 2
                        : (b & 0xF0) == 0xE0 ? 3
                        : (b & 0xF8) == 0xF0 ? 4
                                             : 1;
    return need > back ? back : 0;
  }
  return 0;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

LiveConsole::LiveConsole(bool stream_output, bool status_line)
    : stream_output_(stream_output),
      status_line_(status_line),
      stdout_is_terminal_(is_terminal(1)) {}

LiveConsole::~LiveConsole() { clear_status(); }

void LiveConsole::attach(LaunchSpec& spec) {
  spec.note_stalls = true;
  spec.on_output = [this](int stream, const char* data, std::size_t n) { output(stream, data, n); };
  spec.on_look = [this](const LiveStatus& s) { status(s); };
  spec.on_stall = [this](StallNote::Event e, const StallNote& n, const Stacks* taken) {
    stall(e, n, taken);
  };
  spec.watch_memory = true;
  spec.on_memory_growth = [this](const MemoryGrowth& g) {
    note("MEMORY: " + reports::memory_growth_text(g.pids, g.from_kib, g.to_kib));
  };
}

void LiveConsole::clear_status() {
  if (!status_shown_) return;
  write_all(kStderr, "\r\033[K");
  status_shown_ = false;
}

void LiveConsole::flush_pending(int stream, bool all) {
  std::string& p = pending_[stream];
  const size_t keep = all ? 0 : incomplete_tail(p);
  if (p.size() == keep) return;
  const std::string ready = p.substr(0, p.size() - keep);
  p.erase(0, p.size() - keep);
  clear_status();
  // A carriage return is kept (a progress bar redraws its line with it); every other control
  // byte is shown escaped.
  std::string shown;
  size_t from = 0;
  for (size_t cr = ready.find('\r');; cr = ready.find('\r', from)) {
    shown += reports::terminal_safe(std::string_view(ready).substr(
        from, cr == std::string::npos ? std::string::npos : cr - from));
    if (cr == std::string::npos) break;
    shown += '\r';
    from = cr + 1;
  }
  write_all(stream == 1 ? kStdout : kStderr, shown);
  if (stream == 2 || stdout_is_terminal_) at_line_start_ = ready.back() == '\n';
  if (stream == 1) stdout_line_open_ = ready.back() != '\n';
}

void LiveConsole::output(int stream, const char* data, std::size_t n) {
  if (!stream_output_ || stream < 1 || stream > 2) return;
  pending_[stream].append(data, n);
  flush_pending(stream, false);
  if (status_line_ && at_line_start_ && !status_text_.empty()) {
    write_all(kStderr, status_text_);
    status_shown_ = true;
  }
}

void LiveConsole::status(const LiveStatus& s) {
  if (!status_line_) return;
  std::string text = "\r\033[Kforkcheck: " + fmt("%.0f s", s.elapsed_s) + ", " +
                     reports::counted(s.processes, "process", "processes") + ", CPU " +
                     fmt("%.2f", s.cpu_share);
  if (s.still_s >= 1) text += ", still for " + fmt("%.0f s", s.still_s);
  if (s.starved_s >= 1) text += ", waiting for a CPU for " + fmt("%.0f s", s.starved_s);
  status_text_ = text;
  // Only after a line the program ended: a status line never overwrites a line it is writing.
  if (!at_line_start_) return;
  write_all(kStderr, text);
  status_shown_ = true;
}

void LiveConsole::note(const std::string& text) {
  clear_status();
  if (!at_line_start_) write_all(kStderr, "\n");
  at_line_start_ = true;
  write_all(kStderr, "forkcheck: " + text + "\n");
}

// What forkcheck does next, and how the user ends it: said once, at the first stall.
constexpr const char* kWatchingOn = " (Ctrl-C writes the report with what is known now)";

void LiveConsole::stall(StallNote::Event e, const StallNote& n, const Stacks* taken) {
  switch (e) {
    case StallNote::Event::kStalled:
      if (n.kind == StallNote::Kind::kProcess && n.process) {
        const ProcessStall& p = *n.process;
        note(std::string(n.first ? "STALLED at " : "STALLED again at ") +
             reports::format_tenths(n.after_s) + ": " +
             reports::stuck_process_text(p.pid, p.name, p.threads, p.stuck_s, p.pause) + "; " +
             reports::rest_of_tree_text(p.rest_still, p.rest_cpu_share) +
             (n.first ? std::string("; taking its stacks, and watching on") + kWatchingOn
                      : std::string("; watching on")));
        break;
      }
      note(std::string(n.first ? "STALLED at " : "STALLED again at ") +
           reports::format_tenths(n.after_s) + ": the whole tree (" +
           reports::counted(n.processes, "process", "processes") + ", " +
           reports::counted(n.threads, "thread", "threads") + ") has used under 1% of a CPU for " +
           reports::format_tenths(n.still_s) + " (" + reports::format_cpu(n.cpu_s_in_window) +
           " in the last " + reports::format_tenths(n.window_s) + ")" +
           (n.waiting_in.empty() ? "" : ", waiting in " + n.waiting_in) +
           (n.process ? "; " + reports::stuck_process_text(n.process->pid, n.process->name,
                                                           n.process->threads, n.process->stuck_s,
                                                           n.process->pause)
                      : "") +
           (n.first ? std::string("; taking its stacks, and watching on") + kWatchingOn
                    : std::string("; watching on")));
      break;
    case StallNote::Event::kStuck:
      if (n.process)
        note("STUCK: " +
             reports::stuck_process_text(n.process->pid, n.process->name, n.process->threads,
                                         n.process->stuck_s, n.process->pause) +
             " (in the tree still since " + reports::format_tenths(n.after_s) + ")");
      break;
    case StallNote::Event::kStarved:
      note("STARVED at " + reports::format_tenths(n.after_s) + ": " +
           reports::starved_text(n.starved_s, n.load_average, n.cpus) +
           "; not a stall: watching on");
      break;
    case StallNote::Event::kSleeping:
      if (n.sleep)
        note("SLEEPING at " + reports::format_tenths(n.after_s) + ": " +
             reports::sleeping_text(reports::read_as<reports::Sleep>(tree_sleep_record(*n.sleep))) +
             "; not a stall: watching on");
      break;
    case StallNote::Event::kStacksTaken: {
      const std::string where = taken ? where_lines(*taken, 12) : "";
      note("where it waits" + std::string(where.empty() ? ": no stacks could be taken" : ":") +
           (taken && !taken->python_note.empty() ? " (" + taken->python_note + ")" : ""));
      if (!where.empty()) {
        clear_status();
        write_all(kStderr, reports::terminal_safe(where));
      }
      break;
    }
    case StallNote::Event::kResumed:
      note("working again at " + reports::format_tenths(n.resumed_after_s) + " (stalled at " +
           reports::format_tenths(n.after_s) + ")");
      break;
  }
}

void LiveConsole::finish() {
  flush_pending(1, true);
  flush_pending(2, true);
  clear_status();
  // The program's last line, left unended, is not run into forkcheck's own (on stdout).
  if (stdout_line_open_) write_all(kStdout, "\n");
  stdout_line_open_ = false;
  at_line_start_ = true;
  status_text_.clear();
}

std::string LiveConsole::where_lines(const Stacks& stacks, std::size_t max_lines) {
  std::string out;
  for (const auto& line : reports::where_it_waits(reports::read_stacks(to_json(stacks)), max_lines))
    out += "  " + line + "\n";
  return out;
}

}  // namespace fc::harness
