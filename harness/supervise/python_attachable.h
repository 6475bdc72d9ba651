// forkcheck attach's way to a Python process's own frames, where its job was started with the
// lines `forkcheck attach --env` prints (forkcheck_boot.start_attachable): the process made two
// anonymous files, found here by name through /proc/PID/fd and opened there (the rights a
// debugger needs, no more): "forkcheck-py-dumps", which faulthandler writes a thread's own frames
// into when that thread gets the dump signal, and "forkcheck-py-threads", which lists its Python
// threads, so that no other thread is ever signalled. The ask itself is exec's
// (python_stacks_ask.h), through PythonChannel::adopt.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace fc::harness {

struct AttachableThread {
  int tid = 0;
  unsigned long long start = 0;  // the kernel's start time of the thread, in clock ticks
  std::string name;
};

// The threads file's text: "forkcheck-py-threads pid=PID signal=SIGNAL", then "+TID START NAME"
// per Python thread started (the last line of a TID wins). nullopt, with why, when it is not
// `pid`'s own (a forked child that could not make its own holds its parent's; `pid` as the
// process sees itself, in its own pid namespace) or names another signal than `signal`.
std::optional<std::vector<AttachableThread>> parse_attachable_threads(const std::string& text,
                                                                      int pid, int signal,
                                                                      std::string& why);

struct AttachableFiles {
  int dump_fd = -1;                       // open for reading; the caller's to close
  std::vector<AttachableThread> threads;  // its Python threads listed and alive now, by our ids
};

// `pid`'s files, when it has them and they are its own and name `signal`; otherwise nullopt, and
// `why` says what was missing (empty: no such files, the job was started without the lines).
// A thread listed is kept only while a thread of that id with that start time is alive: an id
// the kernel gave again (to an OpenMP worker, say) is never taken for it. Ids it wrote in a pid
// namespace of its own (a container) are turned into ours. Linux only (/proc); elsewhere always
// nullopt.
std::optional<AttachableFiles> attachable_files(int pid, int signal, std::string& why);

}  // namespace fc::harness
