#include "reports/ticket_environment.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <utility>

#include "reports/text.h"

namespace fc::reports {
namespace {

using nlohmann::json;

// obj[key] when obj is an object holding it, else a null (a saved environment may lack it).
const json& at(const json& obj, const char* key) {
  static const json none;
  if (!obj.is_object()) return none;
  auto it = obj.find(key);
  return it != obj.end() ? *it : none;
}

std::optional<double> number(const json& v) {
  if (v.is_number()) return v.get<double>();
  return std::nullopt;
}

std::string whole(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

// A thread count from a variable such as OMP_NUM_THREADS: its first number ("4,2": nested
// levels), or none when it does not start with one.
std::optional<double> leading_count(const json& v) {
  if (!v.is_string()) return std::nullopt;
  const std::string s = v.get<std::string>();
  char* end = nullptr;
  const long n = std::strtol(s.c_str(), &end, 10);
  if (end == s.c_str() || n <= 0) return std::nullopt;
  return static_cast<double>(n);
}

// A variable's value: what forkcheck saw (machine.variables), else the repro program's.
const json& variable(const json& env, const char* name) {
  const json& seen = at(at(env, "machine"), "variables");
  if (seen.is_object() && seen.contains(name)) return seen[name];
  return at(at(env, "variables"), name);
}

// The torch the user's Python runs, when the probe reached it.
const json& python_torch(const json& env) {
  const json& t = at(at(env, "python"), "torch");
  static const json none;
  return t.is_object() && t.contains("version") ? t : none;
}

void add(json& risks, const char* id, const std::string& note, const std::string& why) {
  risks.push_back({{"id", id}, {"note", note}, {"why", why}});
}

std::string missing_why(const json& part) {
  return display(at(part, "missing").is_null() ? at(part, "error") : at(part, "missing"));
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

std::string risk_why(const json& risk) {
  const std::string shown_by = field(risk, "case");
  return field(risk, "why") + (shown_by.empty() ? "" : " (forkcheck list " + shown_by + ")");
}

json environment_risks(const json& env) {
  json risks = json::array();
  const json& machine = at(env, "machine");
  const json& python = at(env, "python");
  const json& torch = python_torch(env);

  // /dev/shm
  const json& shm = at(machine, "dev_shm");
  const auto size = number(at(shm, "size_bytes")), free = number(at(shm, "free_bytes"));
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
  } else if (at(machine, "os") == "Linux" && at(shm, "absent").is_string()) {
    add(risks, "dev-shm-absent", "/dev/shm cannot be used: " + display(at(shm, "absent")),
        "torch.multiprocessing shares tensors through shared memory files there (shm_open): "
        "workers cannot receive them");
  }

  // The open-files limit, as forkcheck was started (what the user's program gets).
  const auto soft = number(at(at(machine, "open_files"), "soft"));
  if (soft && *soft < static_cast<double>(kLowOpenFiles) &&
      at(torch, "sharing_strategy") != "file_system") {
    add(risks, "open-files-low",
        "the open-files limit (ulimit -n) is " + whole(*soft) + ", under " +
            whole(static_cast<double>(kLowOpenFiles)),
        "torch's file_descriptor sharing strategy holds a descriptor per tensor in flight: "
        "DataLoader workers fail with \"Too many open files\" or \"received 0 items of ancdata\"; "
        "raise ulimit -n or torch.multiprocessing.set_sharing_strategy('file_system')");
  }

  // Threads over the CPUs this process may run on, and over the cgroup's quota.
  const json& cpus = at(machine, "cpus");
  const auto usable =
      number(at(cpus, "affinity")) ? number(at(cpus, "affinity")) : number(at(cpus, "online"));
  std::vector<std::pair<std::string, double>> counts;
  for (const char* name : {"OMP_NUM_THREADS", "MKL_NUM_THREADS"})
    if (auto n = leading_count(variable(env, name)))
      counts.emplace_back(name + ("=" + display(variable(env, name))), *n);
  if (auto n = number(at(at(torch, "threads"), "intra_op")))
    counts.emplace_back("torch's " + whole(*n) + " intra-op threads", *n);
  else if (auto m = number(at(at(env, "threads"), "torch_intra_op")))
    counts.emplace_back("libtorch's " + whole(*m) + " intra-op threads", *m);
  if (usable && *usable >= 1) {
    std::string over;
    for (const auto& [what, n] : counts)
      if (n > *usable) over += (over.empty() ? "" : ", ") + what;
    const std::string where = number(at(cpus, "affinity")) ? " in the affinity mask" : " online";
    if (!over.empty())
      add(risks, "threads-over-cpus", over + ": more than the " + whole(*usable) + " CPUs" + where,
          "every parallel op runs more busy threads than there are CPUs (oversubscription), and "
          "each worker process multiplies it: set OMP_NUM_THREADS to the CPUs divided by the "
          "processes");
    const auto quota = number(at(cpus, "cgroup_quota"));
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
  const bool fork_default = at(at(python, "multiprocessing"), "default_start_method") == "fork";
  if (fork_default && at(at(torch, "cuda"), "available") == true)
    add(risks, "fork-with-cuda",
        "multiprocessing's default start method is fork, and CUDA is available",
        "a worker forked after the parent used CUDA fails with \"Cannot re-initialize CUDA in "
        "forked subprocess\": use spawn or forkserver (multiprocessing.set_start_method('spawn'))");
  bool gomp = false;
  for (const auto& lib :
       at(torch, "openmp_runtimes").is_array() ? at(torch, "openmp_runtimes") : json::array())
    gomp = gomp || display(lib).rfind("libgomp", 0) == 0;
  const auto intra = number(at(at(torch, "threads"), "intra_op"));
  if (fork_default && gomp && intra && *intra > 1 && at(torch, "parallel_backend") == "OpenMP")
    add(risks, "fork-with-openmp",
        "multiprocessing's default start method is fork, and torch runs parallel ops on GNU OpenMP "
        "(libgomp) with " +
            whole(*intra) + " threads",
        "workers forked after a parallel torch op in the parent can hang in their own first one "
        "(libgomp's thread pool does not survive fork): "
        "use spawn or forkserver");
  return risks;
}

std::vector<EnvRow> python_rows(const json& env) {
  std::vector<EnvRow> rows;
  const json& p = at(env, "python");
  if (!p.is_object()) return rows;
  auto add_row = [&](const std::string& label, const std::string& value) {
    if (!value.empty()) rows.push_back({label, value, false});
  };
  const std::string asked = field(p, "asked", "python3");
  const std::string interpreter = field(p, "interpreter");
  const std::string status = field(p, "status");
  const json& py = at(p, "python");
  // How it was asked for, and the program started when that is not the interpreter itself (a
  // pyenv shim, a symlink): "python3 on PATH: /root/.pyenv/shims/python3", "--python".
  const bool named = asked.rfind("--python", 0) == 0;
  const bool same = interpreter.empty() || interpreter == field(py, "executable");
  const std::string how = named ? (same ? "--python" : "--python " + interpreter)
                                : asked + (interpreter.empty() ? "" : ": " + interpreter);
  if (status != "ok") {
    add_row("Python", status == "no-python" ? field(p, "error") : how + ": " + field(p, "error"));
    add_row("hint", field(p, "hint"));
    return rows;
  }
  add_row("Python", field(py, "version", "?") + " " + field(py, "executable") + " (" +
                        (named || !same ? how : asked) + ")" +
                        (at(py, "debug_build") == true ? ", debug build" : ""));

  const json& t = at(p, "torch");
  if (!at(t, "version").is_null()) {
    std::string build =
        field(t, "version") + ", " + (at(t, "debug") == true ? "debug" : "release") + " build";
    if (!at(t, "cuda_build").is_null())
      build += ", CUDA " + display(at(t, "cuda_build")) +
               (at(t, "cudnn").is_null() ? ", no cuDNN" : ", cuDNN " + display(at(t, "cudnn")));
    else if (!at(t, "hip_build").is_null())
      build += ", ROCm " + display(at(t, "hip_build"));
    else
      build += ", CPU only (no CUDA build)";
    add_row("torch", build + " " + field(t, "path"));
    std::string threads;
    if (at(t, "threads").is_object())
      threads = display(at(at(t, "threads"), "intra_op")) + " intra-op, " +
                display(at(at(t, "threads"), "inter_op")) + " inter-op";
    if (!at(t, "parallel_backend").is_null())
      threads += (threads.empty() ? "" : "; ") + std::string("backend ") +
                 display(at(t, "parallel_backend"));
    if (!at(t, "openmp").is_null()) threads += " (" + display(at(t, "openmp")) + ")";
    if (at(t, "openmp_runtimes").is_array() && !at(t, "openmp_runtimes").empty()) {
      std::string libs;
      for (const auto& l : at(t, "openmp_runtimes"))
        libs += (libs.empty() ? "" : ", ") + display(l);
      threads += ", " + libs + " loaded";
    }
    add_row("torch threads", threads);
    const json& cuda = at(t, "cuda");
    std::string c;
    if (at(cuda, "available") == true) {
      c = "available, " + display(at(cuda, "device_count")) + " GPU(s)";
      for (const auto& d : at(cuda, "devices").is_array() ? at(cuda, "devices") : json::array()) {
        c += "; #" + display(at(d, "index")) + " " + field(d, "name");
        std::string extra =
            at(d, "capability").is_null() ? "" : "sm " + display(at(d, "capability"));
        if (auto mem = number(at(d, "memory_bytes")))
          extra += (extra.empty() ? "" : ", ") + format_bytes(*mem);
        if (!extra.empty()) c += " (" + extra + ")";
      }
    } else {
      c = "not available to torch";
    }
    if (!at(cuda, "error").is_null()) c += " (" + display(at(cuda, "error")) + ")";
    add_row("torch CUDA", c);
    if (!at(t, "sharing_strategy").is_null())
      add_row("torch sharing strategy", display(at(t, "sharing_strategy")));
  } else if (!at(t, "missing").is_null()) {
    add_row("torch", "not installed for " + field(py, "executable", interpreter) + " (" +
                         missing_why(t) + ")");
  } else if (!at(t, "error").is_null()) {
    add_row("torch", "import torch failed: " + missing_why(t));
  }

  const json& np = at(p, "numpy");
  if (!at(np, "version").is_null())
    add_row("numpy", display(at(np, "version")));
  else if (!at(np, "missing").is_null())
    add_row("numpy", "not installed");
  else if (!at(np, "error").is_null())
    add_row("numpy", "import numpy failed: " + missing_why(np));

  const json& mp = at(p, "multiprocessing");
  if (!at(mp, "default_start_method").is_null()) {
    std::string methods;
    for (const auto& m :
         at(mp, "start_methods").is_array() ? at(mp, "start_methods") : json::array())
      methods += (methods.empty() ? "" : ", ") + display(m);
    add_row("default start method", display(at(mp, "default_start_method")) +
                                        (methods.empty() ? "" : " (of " + methods + ")"));
  } else if (!at(mp, "error").is_null()) {
    add_row("default start method", "unknown: " + display(at(mp, "error")));
  }
  add_row("hint", field(p, "hint"));
  return rows;
}

std::vector<EnvRow> machine_rows(const json& env) {
  std::vector<EnvRow> rows;
  const json& m = at(env, "machine");
  if (!m.is_object()) return rows;
  const json& shm = at(m, "dev_shm");
  if (auto size = number(at(shm, "size_bytes"))) {
    std::string v = format_bytes(*size);
    if (auto free = number(at(shm, "free_bytes"))) v += ", " + format_bytes(*free) + " free";
    rows.push_back({"/dev/shm", v, false});
  } else if (!at(shm, "absent").is_null()) {
    rows.push_back({"/dev/shm", "none (" + display(at(shm, "absent")) + ")", false});
  }
  const json& files = at(m, "open_files");
  if (!at(files, "soft").is_null())
    rows.push_back({"open files (ulimit -n)",
                    display(at(files, "soft")) + " soft, " + display(at(files, "hard")) + " hard",
                    false});
  const json& cpus = at(m, "cpus");
  if (!at(cpus, "online").is_null()) {
    std::string v = display(at(cpus, "online")) + " online";
    if (!at(cpus, "affinity").is_null())
      v += ", " + display(at(cpus, "affinity")) + " in the affinity mask";
    if (auto q = number(at(cpus, "cgroup_quota"))) {
      char buf[64];
      std::snprintf(buf, sizeof buf, ", cgroup quota %g (cpu.max)", *q);
      v += buf;
    }
    rows.push_back({"CPUs", v, false});
  }
  // The variables forkcheck saw (OMP_*, MKL_*, KMP_*, GOMP_*) and the repro program's list (BLAS
  // threads, CUDA_VISIBLE_DEVICES, LD_PRELOAD...), once each.
  json vars = json::object();
  if (at(env, "variables").is_object()) vars.update(at(env, "variables"));
  if (at(m, "variables").is_object()) vars.update(at(m, "variables"));
  std::string v;
  for (const auto& [k, val] : vars.items()) v += (v.empty() ? "" : " ") + k + "=" + display(val);
  rows.push_back(
      {"variables",
       v.empty()
           ? "none of OMP_*, MKL_*, KMP_*, GOMP_* and the BLAS, CUDA and fork variables is set"
           : v,
       false});
  return rows;
}

}  // namespace fc::reports
