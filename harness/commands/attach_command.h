// `forkcheck attach PID [--hang-after S] [--timeout S] [--kill-on-hang] [--out DIR]`: a running
// process that forkcheck did not start, and every process descended from it, watched from now on
// as `exec` watches its child (subject_command.h: the same supervisor, classification and
// reports; case and variant `attach`): a stall, a process stuck for good, starvation, the wait
// chain, memory and the OOM killer, native stacks (and Python frames where gdb can read them).
// Nothing of it is ended, and a process is held stopped only for a look (eu-stack's brief one,
// gdb's only once it can never go on or the tree is called hung): when it hangs, or --timeout ends
// the watch, or forkcheck is interrupted, the watch ends and the program runs on as it was;
// --kill-on-hang ends a tree hung past --hang-after as exec would. Linux only (its /proc).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "harness/session/subject_command.h"

namespace fc::harness {

struct AttachOptions {
  std::vector<std::string> argv;  // forkcheck's own command line, for the report
  int pid = 0;
  std::filesystem::path out;  // empty: a new run folder (session/out_dir.h)
  double timeout_s = 0;       // none: until it ends, hangs, or forkcheck is interrupted
  double hang_after_s = kAttachHangAfterS;
  bool kill_on_hang = false;
  bool print_env = false;  // --env: print the lines for a job script, and nothing else

  static constexpr double kAttachHangAfterS = 10;
};

// Returns kOk when no hang was seen (it worked on, or ended: its exit status is its parent's),
// kFinding when it hung, 128 + N when forkcheck was interrupted by signal N. Throws UsageError,
// before anything is written, for a pid that is not a running process, is forkcheck's own or one
// of its ancestors, or on a platform other than Linux.
int attach_command(const AttachOptions& options);

// `forkcheck attach --env`: the lines a job script adds (sh) so that every Python process of the
// job makes its Python frames readable by a later `forkcheck attach`, doing nothing until then
// (harness/python/forkcheck_boot.py, start_attachable): the bootstrap's folder first on
// PYTHONPATH, the signal it answers on, and where its compiled code is kept.
std::string attach_env_lines();

}  // namespace fc::harness
