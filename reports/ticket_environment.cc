#include "reports/ticket_environment.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <utility>

#include "reports/text.h"

namespace fc::reports {
namespace {

using nlohmann::json;

std::optional<double> number(const json& v) {
  if (v.is_number()) return v.get<double>();
  return std::nullopt;
}

std::string whole(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

std::string number_text(const std::optional<long long>& n) {
  return n ? std::to_string(*n) : std::string();
}

std::string number_text(const std::optional<double>& n) { return n ? whole(*n) : std::string(); }

// A thread count from a variable such as OMP_NUM_THREADS: its first number ("4,2": nested
// levels), or none when it does not start with one.
std::optional<double> leading_count(const std::string& s) {
  char* end = nullptr;
  const long n = std::strtol(s.c_str(), &end, 10);
  if (end == s.c_str() || n <= 0) return std::nullopt;
  return static_cast<double>(n);
}

// A variable's value: what forkcheck saw (machine.variables), else the repro program's; nullopt
// when neither has it.
std::optional<std::string> variable(const Environment& env, const char* name) {
  if (env.machine)
    if (const auto it = env.machine->variables.find(name); it != env.machine->variables.end())
      return it->second;
  if (const auto it = env.variables.find(name); it != env.variables.end()) return it->second;
  return std::nullopt;
}

// The torch the user's Python runs, when the probe reached it.
const EnvTorch* python_torch(const Environment& env) {
  if (!env.python || !env.python->torch || env.python->torch->version.empty()) return nullptr;
  return &*env.python->torch;
}

void add(json& risks, const char* id, const std::string& note, const std::string& why) {
  risks.push_back({{"id", id}, {"note", note}, {"why", why}});
}

std::string missing_why(const std::string& missing, const std::string& error) {
  return missing.empty() ? error : missing;
}

}  // namespace

std::string format_bytes(double bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0 || bytes == std::floor(bytes) || bytes >= 100)
    std::snprintf(buf, sizeof buf, "%.0f %s", bytes, units[u]);
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", bytes, units[u]);
  return buf;
}

std::string risk_why(const EnvRisk& risk) {
  return risk.why + (risk.case_id.empty() ? "" : " (forkcheck list " + risk.case_id + ")");
}

json environment_risks(const Environment& env) {
  json risks = json::array();
  static const EnvMachine no_machine;
  const EnvMachine& machine = env.machine ? *env.machine : no_machine;
  const EnvTorch* torch = python_torch(env);

  // /dev/shm
  static const EnvDevShm no_shm;
  const EnvDevShm& shm = machine.dev_shm ? *machine.dev_shm : no_shm;
  const auto size = shm.size_bytes, free = shm.free_bytes;
  const auto small = static_cast<double>(kSmallShmBytes);
  const std::string shm_why =
      "DataLoader workers hand batches over in /dev/shm and die with a bus error (\"unexpected bus "
      "error\", \"No space left on device\") when it fills; Docker's default is 64 MiB: run with "
      "--shm-size=8g or --ipc=host";
  if (size && *size < small) {
    add(risks, "dev-shm-small",
        "/dev/shm is " + format_bytes(*size) + ", under " + format_bytes(small), shm_why);
  } else if (size && free && *free < small) {
    add(risks, "dev-shm-full",
        "/dev/shm has " + format_bytes(*free) + " free of " + format_bytes(*size) + ", under " +
            format_bytes(small),
        shm_why);
  } else if (machine.os == "Linux" && !shm.absent.empty()) {
    add(risks, "dev-shm-absent", "/dev/shm cannot be used: " + shm.absent,
        "torch.multiprocessing shares tensors through shared memory files there (shm_open): "
        "workers cannot receive them");
  }

  // The open-files limit, as forkcheck was started (what the user's program gets).
  const auto soft = machine.open_files ? number(machine.open_files->soft) : std::nullopt;
  if (soft && *soft < static_cast<double>(kLowOpenFiles) &&
      (!torch || torch->sharing_strategy != "file_system")) {
    add(risks, "open-files-low",
        "the open-files limit (ulimit -n) is " + whole(*soft) + ", under " +
            whole(static_cast<double>(kLowOpenFiles)),
        "torch's file_descriptor sharing strategy holds a descriptor per tensor in flight: "
        "DataLoader workers fail with \"Too many open files\" or \"received 0 items of ancdata\"; "
        "raise ulimit -n or torch.multiprocessing.set_sharing_strategy('file_system')");
  }

  // Threads over the CPUs this process may run on, and over the cgroup's quota.
  static const EnvMachineCpus no_cpus;
  const EnvMachineCpus& cpus = machine.cpus ? *machine.cpus : no_cpus;
  const auto usable = cpus.affinity ? cpus.affinity : cpus.online;
  std::vector<std::pair<std::string, double>> counts;
  for (const char* name : {"OMP_NUM_THREADS", "MKL_NUM_THREADS"})
    if (const auto value = variable(env, name))
      if (auto n = leading_count(*value)) counts.emplace_back(name + ("=" + *value), *n);
  // torch's intra-op threads where the probe read them; 0 where not.
  const long long intra =
      torch && torch->threads && torch->threads->intra_op ? *torch->threads->intra_op : 0;
  if (intra > 0)
    counts.emplace_back("torch's " + std::to_string(intra) + " intra-op threads",
                        static_cast<double>(intra));
  else if (env.threads && env.threads->torch_intra_op)
    counts.emplace_back(
        "libtorch's " + std::to_string(*env.threads->torch_intra_op) + " intra-op threads",
        static_cast<double>(*env.threads->torch_intra_op));
  if (usable && *usable >= 1) {
    std::string over;
    for (const auto& [what, n] : counts)
      if (n > *usable) over += (over.empty() ? "" : ", ") + what;
    const std::string where = cpus.affinity ? " in the affinity mask" : " online";
    if (!over.empty())
      add(risks, "threads-over-cpus", over + ": more than the " + whole(*usable) + " CPUs" + where,
          "every parallel op runs more busy threads than there are CPUs (oversubscription), and "
          "each worker process multiplies it: set OMP_NUM_THREADS to the CPUs divided by the "
          "processes");
    const auto quota = cpus.cgroup_quota;
    if (over.empty() && quota && std::ceil(*quota) < *usable) {
      std::string above;
      for (const auto& [what, n] : counts)
        if (n > std::ceil(*quota)) above += (above.empty() ? "" : ", ") + what;
      char q[32];
      std::snprintf(q, sizeof q, "%g", *quota);
      if (!above.empty())
        add(risks, "threads-over-quota",
            above + ": more than the cgroup's CPU quota of " + q + " (cpu.max)",
            "the cgroup lets the processes use only that much CPU time: the extra threads wait "
            "their turn inside every parallel op; set OMP_NUM_THREADS to the quota");
    }
  }

  // The default start method, against what torch has started in the parent.
  const bool fork_default = env.python && env.python->multiprocessing &&
                            env.python->multiprocessing->default_start_method == "fork";
  if (fork_default && torch && torch->cuda && torch->cuda->available)
    add(risks, "fork-with-cuda",
        "multiprocessing's default start method is fork, and CUDA is available",
        "a worker forked after the parent used CUDA fails with \"Cannot re-initialize CUDA in "
        "forked subprocess\": use spawn or forkserver (multiprocessing.set_start_method('spawn'))");
  bool gomp = false;
  if (torch)
    for (const auto& lib : torch->openmp_runtimes) gomp = gomp || lib.rfind("libgomp", 0) == 0;
  if (fork_default && gomp && intra > 1 && torch->parallel_backend == "OpenMP")
    add(risks, "fork-with-openmp",
        "multiprocessing's default start method is fork, and torch runs parallel ops on GNU OpenMP "
        "(libgomp) with " +
            std::to_string(intra) + " threads",
        "workers forked after a parallel torch op in the parent can hang in their own first one "
        "(libgomp's thread pool does not survive fork): "
        "use spawn or forkserver");
  return risks;
}

std::vector<EnvRow> python_rows(const Environment& env) {
  std::vector<EnvRow> rows;
  if (!env.python) return rows;
  const EnvPython& p = *env.python;
  auto add_row = [&](const std::string& label, const std::string& value) {
    if (!value.empty()) rows.push_back({label, value, false});
  };
  const std::string asked = or_else(p.asked, "python3");
  const std::string& interpreter = p.interpreter;
  static const EnvInterpreter no_interpreter;
  const EnvInterpreter& py = p.python ? *p.python : no_interpreter;
  // How it was asked for, and the program started when that is not the interpreter itself (a
  // pyenv shim, a symlink): "python3 on PATH: /root/.pyenv/shims/python3", "--python".
  const bool named = asked.rfind("--python", 0) == 0;
  const bool same = interpreter.empty() || interpreter == py.executable;
  const std::string how = named ? (same ? "--python" : "--python " + interpreter)
                                : asked + (interpreter.empty() ? "" : ": " + interpreter);
  if (p.status != "ok") {
    add_row("Python", p.status == "no-python" ? p.error : how + ": " + p.error);
    add_row("hint", p.hint);
    return rows;
  }
  add_row("Python", or_else(py.version, "?") + " " + py.executable + " (" +
                        (named || !same ? how : asked) + ")" +
                        (py.debug_build ? ", debug build" : ""));

  static const EnvTorch no_torch;
  const EnvTorch& t = p.torch ? *p.torch : no_torch;
  if (!t.version.empty()) {
    std::string build = t.version + ", " + (t.debug ? "debug" : "release") + " build";
    if (!t.cuda_build.empty())
      build += ", CUDA " + t.cuda_build +
               (t.cudnn ? ", cuDNN " + std::to_string(*t.cudnn) : ", no cuDNN");
    else if (!t.hip_build.empty())
      build += ", ROCm " + t.hip_build;
    else
      build += ", CPU only (no CUDA build)";
    add_row("torch", build + " " + t.path);
    std::string threads;
    if (t.threads)
      threads = number_text(t.threads->intra_op) + " intra-op, " +
                number_text(t.threads->inter_op) + " inter-op";
    if (!t.parallel_backend.empty())
      threads += (threads.empty() ? "" : "; ") + std::string("backend ") + t.parallel_backend;
    if (!t.openmp.empty()) threads += " (" + t.openmp + ")";
    if (!t.openmp_runtimes.empty()) {
      std::string libs;
      for (const auto& l : t.openmp_runtimes) libs += (libs.empty() ? "" : ", ") + l;
      threads += ", " + libs + " loaded";
    }
    add_row("torch threads", threads);
    std::string c;
    if (t.cuda && t.cuda->available) {
      c = "available, " + number_text(t.cuda->device_count) + " GPU(s)";
      for (const auto& d : t.cuda->devices) {
        c += "; #" + number_text(d.index) + " " + d.name;
        std::string extra = d.capability.empty() ? "" : "sm " + d.capability;
        if (d.memory_bytes) extra += (extra.empty() ? "" : ", ") + format_bytes(*d.memory_bytes);
        if (!extra.empty()) c += " (" + extra + ")";
      }
    } else {
      c = "not available to torch";
    }
    if (t.cuda && !t.cuda->error.empty()) c += " (" + t.cuda->error + ")";
    add_row("torch CUDA", c);
    if (!t.sharing_strategy.empty()) add_row("torch sharing strategy", t.sharing_strategy);
  } else if (!t.missing.empty() && p.source == "bootstrap") {
    // The program's own side: it did not import torch, which says nothing of whether its
    // interpreter has one.
    add_row("torch", "not imported by the program");
  } else if (!t.missing.empty()) {
    add_row("torch", "not installed for " + or_else(py.executable, interpreter) + " (" +
                         missing_why(t.missing, t.error) + ")");
  } else if (!t.error.empty()) {
    add_row("torch", "import torch failed: " + missing_why(t.missing, t.error));
  }

  static const EnvModule no_module;
  const EnvModule& np = p.numpy ? *p.numpy : no_module;
  if (!np.version.empty())
    add_row("numpy", np.version);
  else if (!np.missing.empty())
    add_row("numpy", "not installed");
  else if (!np.error.empty())
    add_row("numpy", "import numpy failed: " + missing_why(np.missing, np.error));

  static const EnvMultiprocessing no_mp;
  const EnvMultiprocessing& mp = p.multiprocessing ? *p.multiprocessing : no_mp;
  if (!mp.default_start_method.empty()) {
    std::string methods;
    for (const auto& m : mp.start_methods) methods += (methods.empty() ? "" : ", ") + m;
    add_row("default start method",
            mp.default_start_method + (methods.empty() ? "" : " (of " + methods + ")"));
  } else if (!mp.error.empty()) {
    add_row("default start method", "unknown: " + mp.error);
  }
  add_row("hint", p.hint);
  return rows;
}

std::vector<EnvRow> machine_rows(const Environment& env) {
  std::vector<EnvRow> rows;
  if (!env.machine) return rows;
  const EnvMachine& m = *env.machine;
  if (m.dev_shm && m.dev_shm->size_bytes) {
    std::string v = format_bytes(*m.dev_shm->size_bytes);
    if (m.dev_shm->free_bytes) v += ", " + format_bytes(*m.dev_shm->free_bytes) + " free";
    rows.push_back({"/dev/shm", v, false});
  } else if (m.dev_shm && !m.dev_shm->absent.empty()) {
    rows.push_back({"/dev/shm", "none (" + m.dev_shm->absent + ")", false});
  }
  if (m.open_files && !m.open_files->soft.is_null())
    rows.push_back({"open files (ulimit -n)",
                    display(m.open_files->soft) + " soft, " + display(m.open_files->hard) + " hard",
                    false});
  if (m.cpus && m.cpus->online) {
    std::string v = number_text(m.cpus->online) + " online";
    if (m.cpus->affinity) v += ", " + number_text(m.cpus->affinity) + " in the affinity mask";
    if (m.cpus->cgroup_quota) {
      char buf[64];
      std::snprintf(buf, sizeof buf, ", cgroup quota %g (cpu.max)", *m.cpus->cgroup_quota);
      v += buf;
    }
    rows.push_back({"CPUs", v, false});
  }
  // The variables forkcheck saw (OMP_*, MKL_*, KMP_*, GOMP_*) and the repro program's list (BLAS
  // threads, CUDA_VISIBLE_DEVICES, LD_PRELOAD...), once each.
  std::map<std::string, std::string> vars = env.variables;
  for (const auto& [k, val] : m.variables) vars[k] = val;
  std::string v;
  for (const auto& [k, val] : vars) v += (v.empty() ? "" : " ") + k + "=" + val;
  rows.push_back(
      {"variables",
       v.empty()
           ? "none of OMP_*, MKL_*, KMP_*, GOMP_* and the BLAS, CUDA and fork variables is set"
           : v,
       false});
  return rows;
}

}  // namespace fc::reports
