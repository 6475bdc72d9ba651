// The model's JSON mapping, one list of keys per type. A key is read when it is present and
// of a type its member can take; else the member keeps its default (report_model.h says why).
#include "reports/model/report_model_json.h"

#include <optional>

namespace fc::reports {
namespace {

using json = nlohmann::json;

template <class T>
void read_key(const json& j, const char* key, T& out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  try {
    out = it->template get<T>();
  } catch (const json::exception&) {  // another type there: a foreign or older report
  }
}

template <class T>
void read_key(const json& j, const char* key, std::optional<T>& out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  // An object member is present only where the report holds an object (or a value of its type).
  if constexpr (std::is_class_v<T> && !std::is_same_v<T, std::string>)
    if (!it->is_object()) return;
  try {
    out = it->template get<T>();
  } catch (const json::exception&) {
  }
}

// `json` members take the value as it is (an absent key leaves their default).
void read_key(const json& j, const char* key, json& out) {
  if (const auto it = j.find(key); it != j.end() && !it->is_null()) out = *it;
}

}  // namespace

// from_json reads each named key into the member of that name; report_keys lists them.
#define FC_REPORT_READ_KEY(member) read_key(j, #member, t.member);
#define FC_REPORT_KEY_NAME(member) #member,
#define FC_REPORT_MODEL(Type, ...)                                                       \
  void from_json(const json& j, Type& t) {                                               \
    if (!j.is_object()) return;                                                          \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(FC_REPORT_READ_KEY, __VA_ARGS__))           \
  }                                                                                      \
  std::vector<std::string> report_keys(const Type* /*tag*/) {                            \
    return {NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(FC_REPORT_KEY_NAME, __VA_ARGS__))}; \
  }

FC_REPORT_MODEL(Exit, code, signal, signal_name, core_dumped)
FC_REPORT_MODEL(PythonFrame, file, line, function, code)
FC_REPORT_MODEL(Thread, pid, tid, name, state, wchan, syscall, frames, python)
FC_REPORT_MODEL(Alarm, where)
FC_REPORT_MODEL(Sleep, pid, tid, process, wait, since_s, ends_in_s, ends_exact, alarm)
FC_REPORT_MODEL(TreeLook, state, still_s, starved_s, window_s, cpu_s_in_window, cpu_s, processes,
                threads, longest_still_s, looks, waiting_in, sleep)
FC_REPORT_MODEL(Activity, cpu_s, longest_still_s, longest_starved_s, run_queue_s, looks)
FC_REPORT_MODEL(StuckProcess, pid, ppid, name, threads, since_s, stuck_s, rest_cpu_share,
                rest_still, wait)
FC_REPORT_MODEL(Attached, pid, parent_pid, left_running, ended, running_at_end)
FC_REPORT_MODEL(LookSignal, pid, what, at_s)
FC_REPORT_MODEL(DiedAfterLook, pid, what, after_s, how)
FC_REPORT_MODEL(Watchdog, deadline_passed, sigterm, sigkill, timeout_s, leftovers_killed,
                leftovers_surviving, group_strangers, attached, tree, activity, stuck,
                stuck_too_long, paused_s, called_after_s, called_for, hang_after_s,
                exited_by_itself, deadline_to_end_s, look_signals, died_after_look)
FC_REPORT_MODEL(StepHang, pid, step, within_s, waited_s)
FC_REPORT_MODEL(ProtocolError, line, why, lines)
FC_REPORT_MODEL(Cause, rule, source, cause, fix, missing)
FC_REPORT_MODEL(FileHolder, pid, fd, reads, writes)
FC_REPORT_MODEL(WaitFile, fd, kind, inode, waits_to, peer, holders, peer_holders)
FC_REPORT_MODEL(WaitLink, pid, tid, thread, call, on, processes, child, bytes, files)
FC_REPORT_MODEL(ChainProcess, name, ppid, in_tree, state)
FC_REPORT_MODEL(WaitChain, read, why_not, root, links, end, end_pid, proven, closed, unproven,
                processes)
FC_REPORT_MODEL(MemorySample, at_s, rss_kib, pss_kib, private_kib)
FC_REPORT_MODEL(ProcessSamples, pid, ppid, name, samples, first, peak, last)
FC_REPORT_MODEL(OomKill, pid, log)
FC_REPORT_MODEL(CgroupOomKills, cgroup, oom_kill_before, oom_kill_after)
FC_REPORT_MODEL(OomFacts, kernel_log_read, killed, cgroups, system_oom_kill_before,
                system_oom_kill_after)
FC_REPORT_MODEL(Memory, every_s, processes_sampled, processes, oom)
FC_REPORT_MODEL(ProcessEnd, pid, what, how, where, why)
FC_REPORT_MODEL(ProcessEndList, count, list)
FC_REPORT_MODEL(ProcessEnds, failed, not_counted)
FC_REPORT_MODEL(Stall, kind, process, after_s, still_s, waiting_in, processes, threads,
                resumed_after_s, stacks, stacks_method, stacks_note, stacks_python_note)
FC_REPORT_MODEL(ForkHazard, kind, runtime, what, why, instead, threads, allowed)
FC_REPORT_MODEL(ForkThread, tid, name, main)
FC_REPORT_MODEL(ChildEnd, how, code, signal, signal_name, core, via, seen_by, note)
FC_REPORT_MODEL(ForkEvent, index, pid, child, command, exec, exec_path, exec_argv, exec_errno,
                exec_error, hazards, allowed, advice, notes, seq, at_s, threads, thread,
                thread_list, threads_listed, truncated, runtimes, cuda, backtrace, python,
                child_end)
FC_REPORT_MODEL(WatchTotals, forks, hazardous, failing, allowed, safe, exec, runtimes)
FC_REPORT_MODEL(WatchFinding, kind, runtime, title, allowed, forks, fork_indices, what, why, fix)
FC_REPORT_MODEL(WatchSummary, totals, findings, allowed_kinds, events_dir, event_files,
                bad_event_lines, forks_listed, preload)
FC_REPORT_MODEL(PythonTest, name, by, since_s)
FC_REPORT_MODEL(PythonThread, ident, native_id, name, target, daemon, started_at, at_s)
FC_REPORT_MODEL(PythonException, where, type, message, frames, thread_name, process_name, test,
                at_s)
FC_REPORT_MODEL(PythonChildExit, pid, returncode, via, asked, name, target, signal, test, at_s)
FC_REPORT_MODEL(PythonStartMethod, method, where, overridden_by, count)
FC_REPORT_MODEL(PythonEndAsked, child, how, by, where, at_s)
FC_REPORT_MODEL(PythonSignalSent, to, group, signal, where, at_s)
FC_REPORT_MODEL(PythonEndLooked, child, code, via, where, at_s)
FC_REPORT_MODEL(PythonPoolBroken, workers, at_s)
FC_REPORT_MODEL(PythonSignalHandler, signal, handler, where, at_s)
FC_REPORT_MODEL(PythonFork, seq, last_seq, folded, stack, threads, native_threads, torch,
                start_method, at_s, last_at_s)
FC_REPORT_MODEL(PythonExit, code, at_s)
FC_REPORT_MODEL(PythonCrashThread, ident, current, frames)
FC_REPORT_MODEL(PythonCrash, fatal, dumped_by, written_to, rearmed_over, threads)
FC_REPORT_MODEL(PythonPaths, stdlib, platstdlib, purelib, platlib, site_packages)
FC_REPORT_MODEL(PythonInterpreter, version, implementation, executable)
FC_REPORT_MODEL(PythonProcess, pid, ppid, born, fork_seq, dump_signal, stacks_signal, start_method,
                python, main_thread, argv, cwd, crash_dumps, paths, threads, forks, exceptions,
                child_exits, start_methods, ends_asked, signal_handlers, signals_sent, ends_looked,
                pools_broken, torch, exit, test, first_seen_s, gone_s, crash)
FC_REPORT_MODEL(PythonSide, processes, dropped, dropped_by, bounds, quiet_folded)
FC_REPORT_MODEL(EnvDevShm, path, size_bytes, free_bytes, absent)
FC_REPORT_MODEL(EnvOpenFiles, soft, hard)
FC_REPORT_MODEL(EnvMachineCpus, online, affinity, cgroup_quota)
FC_REPORT_MODEL(EnvMachine, os, dev_shm, open_files, cpus, variables)
FC_REPORT_MODEL(EnvInterpreter, version, implementation, executable, prefix, debug_build)
FC_REPORT_MODEL(EnvTorchThreads, intra_op, inter_op)
FC_REPORT_MODEL(EnvCudaDevice, index, name, capability, memory_bytes)
FC_REPORT_MODEL(EnvTorchCuda, available, device_count, devices, error)
FC_REPORT_MODEL(EnvTorch, version, path, debug, cuda_build, hip_build, cudnn, threads,
                parallel_backend, openmp, openmp_runtimes, cuda, sharing_strategy, missing, error)
FC_REPORT_MODEL(EnvModule, version, missing, error)
FC_REPORT_MODEL(EnvMultiprocessing, default_start_method, start_methods, error)
FC_REPORT_MODEL(EnvPython, asked, interpreter, status, error, hint, source, python, torch, numpy,
                multiprocessing)
FC_REPORT_MODEL(EnvThreads, nproc, omp_get_max_threads, torch_intra_op, torch_inter_op)
FC_REPORT_MODEL(TorchBuild, program, build_s, built_at, jobs, cmake, compiler, torch, python, log)
FC_REPORT_MODEL(TorchCases, source, why, detail, cases, python, torch, build_s, built_at, program,
                log, package_dir, build_dir, cmake, compiler, jobs, built_now, last_build)
FC_REPORT_MODEL(EnvCollectedBy, program, pid, fallback, note, torch_program, user_program)
FC_REPORT_MODEL(EnvLibtorch, version, config, parallel_info, has_openmp, has_mkl, has_mkldnn,
                has_lapack, openmp_version, cuda_devices)
FC_REPORT_MODEL(EnvPythonTorch, interpreter, status, error, package_dir, version, cuda, git_version,
                debug, libtorch_cpu)
FC_REPORT_MODEL(CatalogLibtorch, version, library)
FC_REPORT_MODEL(Environment, error, machine, python, python_torch, risks, collected_by, torch_cases,
                os, libc, compiler, cpus, start_methods, ptrace_scope, variables, threads, cuda,
                libraries, openmp_runtimes, blas, libtorch)
FC_REPORT_MODEL(Source, title, author, document, url)
FC_REPORT_MODEL(NotSelected, name, role)
FC_REPORT_MODEL(Explain, pattern, fix)
FC_REPORT_MODEL(Case, id, title, source, reported, mechanism, platforms, environment_topics,
                featured, program, command, explains, program_libraries, shows_as, verdict,
                verdict_reason, not_selected, variants)
FC_REPORT_MODEL(Run, schema_version, command, argv, started_at, finished_at, duration_s,
                interrupted, complete, options, platform, catalog_errors, environment)
FC_REPORT_MODEL(Summary, cases, variants, by_verdict, by_outcome, mismatches, regressions,
                harness_failures, ok)
FC_REPORT_MODEL(Tool, name, version)
FC_REPORT_MODEL(Report, schema_version, tool, run, cases, summary)

FC_REPORT_MODEL(ForkGuard, pid, seq, last_seq, guard, file, line)

// By hand where a key is a C++ keyword ("case", "class").
void from_json(const json& j, ExplainedBy& t) {
  if (!j.is_object()) return;
  read_key(j, "case", t.case_id);
  read_key(j, "title", t.title);
  read_key(j, "pattern", t.pattern);
  read_key(j, "fix", t.fix);
}
std::vector<std::string> report_keys(const ExplainedBy* /*tag*/) {
  return {"case", "title", "pattern", "fix"};
}
void from_json(const json& j, WorkerHomeFact& t) {
  if (!j.is_object()) return;
  read_key(j, "pid", t.pid);
  read_key(j, "function", t.function);
  read_key(j, "file", t.file);
  read_key(j, "line", t.line);
  read_key(j, "home", t.home);
  read_key(j, "class", t.class_name);
  read_key(j, "class_line", t.class_line);
}
std::vector<std::string> report_keys(const WorkerHomeFact* /*tag*/) {
  return {"pid", "function", "file", "line", "home", "class", "class_line"};
}
void from_json(const json& j, EnvRisk& t) {
  if (!j.is_object()) return;
  read_key(j, "id", t.id);
  read_key(j, "note", t.note);
  read_key(j, "why", t.why);
  read_key(j, "case", t.case_id);
}
std::vector<std::string> report_keys(const EnvRisk* /*tag*/) {
  return {"id", "note", "why", "case"};
}

// Variant by hand only for the two keys whose member names differ (report_model.h).
#define FC_VARIANT_KEYS                                                                         \
  name, start_method, role, expected, expected_why, description, skip_reason, outcome, matched, \
      message, note, duration_s, exit, output_bytes, details, steps, watchdog, hang,            \
      protocol_error, cause, wait_chain, stacks, stacks_method, pid, memory, process_ends,      \
      python_note, python, stacks_note, stall, stacks_python_note, started_via, start_note,     \
      harness_error, not_run, interrupted, program, env, waits_s
void from_json(const json& j, Variant& t) {
  if (!j.is_object()) return;
  NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(FC_REPORT_READ_KEY, FC_VARIANT_KEYS))
  read_key(j, "stdout", t.stdout_text);
  read_key(j, "stderr", t.stderr_text);
  // forkcheck watch's own records, inside details.
  if (const auto d = j.find("details"); d != j.end() && d->is_object()) {
    read_key(*d, "forks", t.forks);
    read_key(*d, "watch", t.watch);
    read_key(*d, "explained_by", t.explained_by);
    read_key(*d, "fork_guards", t.fork_guards);
    read_key(*d, "worker_homes", t.worker_homes);
  }
}
std::vector<std::string> report_keys(const Variant* /*tag*/) {
  std::vector<std::string> keys{
      NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(FC_REPORT_KEY_NAME, FC_VARIANT_KEYS))};
  keys.insert(keys.end(), {"stdout", "stderr"});
  return keys;
}

Report read_report(const json& report) {
  Report r;
  from_json(report, r);
  r.document = report;
  return r;
}

Variant read_variant(const json& variant) {
  Variant v;
  from_json(variant, v);
  return v;
}

std::vector<Thread> read_stacks(const json& stacks) {
  std::vector<Thread> threads;
  if (!stacks.is_array()) return threads;
  for (const auto& t : stacks) from_json(t, threads.emplace_back());
  return threads;
}

}  // namespace fc::reports
