// The Python side of `forkcheck env`, as PyTorch's bug template asks for it (`python -m
// torch.utils.collect_env`): the interpreter, multiprocessing's default start method, numpy, and
// torch's version, build, threads, parallel backend, CUDA and GPUs. forkcheck never loads Python
// or torch itself: a small probe script runs in the interpreter asked for, as a supervised child
// under a deadline (supervise/supervisor.h), and prints what it found as JSON.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fc::harness {

struct PythonProbeOptions {
  // The interpreter: a name looked up in PATH ("python3") or a path ("/usr/bin/python3").
  std::string python = "python3";
  // True when the user named it (`--python`): then one that cannot be found or run is a usage
  // error (UsageError, exit 2), not a fact about this machine.
  bool named_by_user = false;
  double timeout_s = 30;  // the probe's deadline; importing torch from a cold disk takes seconds
  // When the interpreter has no torch, look for one that has among the other python3 in PATH and
  // the usual places (/usr/bin, /usr/local/bin, conda), and name it in "hint". Never used instead.
  bool look_for_torch_elsewhere = true;
};

// Runs the probe. Never throws, but UsageError for an interpreter the user named that cannot be
// found or run. The result (every key but "asked" and "status" may be absent):
//   "asked":        what was asked for, e.g. "python3 on PATH" or "--python /usr/bin/python3"
//   "interpreter":  the program started (the path PATH gave)
//   "status":       "ok" | "no-python" (none on PATH) | "failed" (it could not start, exited
//                   badly or printed no result) | "timed-out" (past timeout_s)
//   "error":        when not ok, why, in one line ("timed out after 30.0 s while importing torch")
//   "python":       {"version", "implementation", "executable" (sys.executable), "prefix",
//                    "debug_build"}
//   "multiprocessing": {"default_start_method", "start_methods"} or {"error"}
//   "numpy":        {"version"}, {"missing": why} or {"error": why}
//   "torch":        {"missing": why}, {"error": why}, or {"version", "path", "import_s", "debug",
//                    "cuda_build" (torch.version.cuda; null: a CPU build), "hip_build",
//                    "cudnn" (torch.backends.cudnn.version(), or null),
//                    "threads": {"intra_op", "inter_op"}, "parallel_backend" ("OpenMP"...),
//                    "openmp" (the OpenMP line of parallel_info()), "parallel_info", "config"
//                    (torch.__config__.show()), "openmp_runtimes" (OpenMP libraries mapped
//                    into the interpreter after `import torch`: Linux), "sharing_strategy",
//                    "cuda": {"available", "device_count", "devices": [{"index", "name",
//                    "capability", "memory_bytes"}]} or {"available": false, "error": why}}
//   "hint":         when torch is missing: another interpreter that has it, and how to ask it
//   "probe_s":      how long the probe ran
nlohmann::json probe_python(const PythonProbeOptions& options);

}  // namespace fc::harness
