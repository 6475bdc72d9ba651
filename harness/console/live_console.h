// What `forkcheck exec` and `watch` show while the program runs: its output as it comes (control
// bytes escaped, as all child text forkcheck prints), a status line on a terminal (elapsed time,
// processes in the tree, CPU now), and, the moment the whole tree stalls, a note saying so and
// then where each process waits (its Python file and line where it runs Python).
#pragma once

#include <cstddef>
#include <string>

#include "harness/supervise/supervisor.h"

namespace fc::harness {

class LiveConsole {
 public:
  // `stream_output`: pass the program's output through; `status_line`: draw the status line
  // (forkcheck's stderr is a terminal).
  LiveConsole(bool stream_output, bool status_line);
  ~LiveConsole();
  LiveConsole(const LiveConsole&) = delete;
  LiveConsole& operator=(const LiveConsole&) = delete;

  // Sets the spec's live hooks to this console's.
  void attach(LaunchSpec& spec);

  // The program ended: what is held back is written, the status line cleared.
  void finish();

  // Where `stacks` wait, as the reports say it (reports::where_it_waits), a line each, indented.
  static std::string where_lines(const Stacks& stacks, std::size_t max_lines);

 private:
  void output(int stream, const char* data, std::size_t n);
  void status(const LiveStatus& s);
  void stall(StallNote::Event e, const StallNote& n, const Stacks* taken);
  void note(const std::string& text);  // a line of forkcheck's own, on stderr
  void clear_status();
  void flush_pending(int stream, bool all);

  bool stream_output_, status_line_, stdout_is_terminal_;
  bool at_line_start_ = true;      // the terminal's cursor is at the start of a line
  bool stdout_line_open_ = false;  // the program's output on stdout ended without a newline
  bool status_shown_ = false;
  std::string status_text_;
  std::string pending_[3];  // an incomplete UTF-8 sequence at the end of a read, per stream
};

}  // namespace fc::harness
