// The report as types: what report.json holds (reports/report.schema.json), read once from it by
// read_report() and rendered by every format. Member names are the report's keys, so that the
// mapping (report_model_json.cc) is one list per type, tested against the schema.
//
// Reading is lenient, as the formats always were: a report from an older forkcheck or edited by
// hand may lack a field or hold another type there; such a field keeps its default here (an
// absent object: std::nullopt) instead of failing the whole report.
//
// Parts still kept as JSON, each for a reason: a variant's `details` (the case's own data; its
// tables and charts are read by report_view.h), `steps`, `output_bytes`; a Python process's
// interpreter and torch facts (their own words); the run's `options`, `platform` and
// `environment` (the document as collected, diffed key by key; its facts are read as
// `Environment` where a format words them).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fc::reports {

// variant.exit: how the variant's own process ended (null: not known, e.g. never started). Wide
// enough for Windows, whose "signal" is an NTSTATUS (0xC0000005) and whose codes are 32 bits
// unsigned.
struct Exit {
  std::optional<long long> code;
  std::optional<long long> signal;
  std::string signal_name;
  bool core_dumped = false;
};

// One Python frame of a thread, innermost first (the bootstrap's dump, or CPython's gdb py-bt).
struct PythonFrame {
  std::string file;
  std::optional<int> line;
  std::string function;
  std::string code;  // the source line
};

// One thread of the tree as taken before it was ended (variant.stacks).
struct Thread {
  int pid = 0;
  int tid = 0;
  std::string name;
  std::string state;
  std::string wchan;
  std::string syscall;
  std::vector<std::string> frames;  // native, innermost first
  std::vector<PythonFrame> python;
};

// sleep.alarm: the wait is for the process's own alarm; where the program set it.
struct Alarm {
  std::optional<PythonFrame> where;
};

// watchdog.tree.sleep: the thread whose timed wait ends first.
struct Sleep {
  int pid = 0;
  int tid = 0;
  std::string process;
  std::string wait;
  double since_s = 0;
  double ends_in_s = -1;  // -1: the timeout could not be read
  bool ends_exact = false;
  std::optional<Alarm> alarm;
};

// watchdog.tree: the tree as the supervisor saw it when it called time.
// Its measures are optional where a report that lacks one must not be made to say 0.
struct TreeLook {
  std::string state;  // blocked, sleeping, working, starved, unknown
  std::optional<double> still_s;
  double starved_s = 0;
  std::optional<double> window_s;
  std::optional<double> cpu_s_in_window;
  double cpu_s = 0;
  std::optional<int> processes;
  std::optional<int> threads;
  double longest_still_s = 0;
  int looks = 0;
  std::string waiting_in;
  std::optional<Sleep> sleep;
};

// watchdog.activity: what watching the tree measured, for every variant that ran.
struct Activity {
  double cpu_s = 0;
  double longest_still_s = 0;
  double longest_starved_s = 0;
  double run_queue_s = 0;
  int looks = 0;
};

// A process that could never go on by itself (watchdog.stuck, stall.process).
struct StuckProcess {
  int pid = 0;
  int ppid = 0;
  std::string name;
  int threads = 0;
  double since_s = 0;
  double stuck_s = 0;
  double rest_cpu_share = 0;
  bool rest_still = false;
  std::string wait;
};

// watchdog.attached: a running process forkcheck attach watched.
struct Attached {
  int pid = 0;
  int parent_pid = 0;
  bool left_running = false;
  bool ended = false;
  std::vector<int> running_at_end;
};

// watchdog.look_signals[]: forkcheck signalled a process of the tree to look at it.
struct LookSignal {
  int pid = 0;
  std::string what;
  double at_s = 0;
};

// watchdog.died_after_look: the child died of a signal soon after one of those.
struct DiedAfterLook {
  int pid = 0;
  std::string what;
  double after_s = 0;
  std::string how;
};

// variant.watchdog: what the supervisor did and saw. Every member has its default when the
// variant has no watchdog record.
struct Watchdog {
  bool deadline_passed = false;
  bool sigterm = false;
  bool sigkill = false;
  std::optional<double> timeout_s;
  std::vector<int> leftovers_killed;
  std::vector<int> leftovers_surviving;
  std::vector<int> group_strangers;
  std::optional<Attached> attached;
  std::optional<TreeLook> tree;
  std::optional<Activity> activity;
  std::optional<StuckProcess> stuck;
  bool stuck_too_long = false;
  double paused_s = 0;
  std::optional<double> called_after_s;
  std::string called_for;  // step, stall, stuck, start-failures, deadline; "" when not called
  std::optional<double> hang_after_s;
  bool exited_by_itself = false;
  std::optional<double> deadline_to_end_s;
  std::vector<LookSignal> look_signals;
  std::optional<DiedAfterLook> died_after_look;
};

// variant.hang: a step that stalled.
struct StepHang {
  int pid = 0;
  std::string step;
  std::optional<double> within_s;
  std::optional<double> waited_s;
};

// variant.protocol_error: what the child sent that is not a forkcheck message.
struct ProtocolError {
  std::string line;  // the first such line
  std::string why;
  int lines = 0;  // how many such lines the channel carried
};

// variant.cause: the cause a rule of known shapes found (reports/known_causes.h).
struct Cause {
  std::string rule;
  std::string source;
  std::string cause;
  std::string fix;
  std::string missing;
};

// variant.wait_chain: who waited on whom when time was called (harness/supervise/wait_graph.h),
// from the program's own process to the root of the wait.
struct FileHolder {  // a process holding a pipe's or socket's end, and which way it uses it
  int pid = 0;
  int fd = 0;
  bool reads = false;
  bool writes = false;
};
struct WaitFile {  // a pipe or socket a thread waits on
  int fd = 0;
  std::string kind;  // pipe, socket, other
  long long inode = 0;
  std::string waits_to;           // read, write
  std::optional<long long> peer;  // a Unix socket's peer's inode
  std::vector<FileHolder> holders;
  std::vector<FileHolder> peer_holders;
};
struct WaitLink {  // a thread of `pid` waits (call, on) on `processes`
  int pid = 0;
  int tid = 0;
  std::string thread;
  std::string call;
  std::string on;  // own process, shared futex, child, any child, files, running, timed, held...
  std::vector<int> processes;
  std::optional<int> child;
  std::optional<long long> bytes;  // what a write asked to write
  std::vector<WaitFile> files;
};
struct ChainProcess {
  std::string name;
  int ppid = 0;
  bool in_tree = false;
  std::string state;
};
struct WaitChain {
  bool read = false;
  std::string why_not;
  int root = 0;
  std::vector<WaitLink> links;
  std::string end;  // cycle, working, asleep, outside, self, unknown, none
  int end_pid = 0;
  bool proven = false;
  std::vector<int> closed;
  std::string unproven;
  std::map<std::string, ChainProcess> processes;  // by pid
};

// variant.memory: each process's memory as sampled (smaps_rollup), and the kernel's OOM kills.
struct MemorySample {
  double at_s = 0;
  long long rss_kib = 0;
  long long pss_kib = 0;
  long long private_kib = 0;  // Private_Clean + Private_Dirty
};
struct ProcessSamples {
  int pid = 0;
  int ppid = 0;
  std::string name;
  int samples = 0;
  MemorySample first;
  MemorySample peak;  // at its peak of private memory
  MemorySample last;
};
struct OomKill {  // a line of the kernel's log naming a victim
  int pid = 0;
  std::string log;
};
struct CgroupOomKills {
  std::string cgroup;
  std::optional<long long> oom_kill_before;
  std::optional<long long> oom_kill_after;
};
struct OomFacts {
  bool kernel_log_read = false;
  std::vector<OomKill> killed;
  std::vector<CgroupOomKills> cgroups;
  std::optional<long long> system_oom_kill_before;
  std::optional<long long> system_oom_kill_after;
};
struct Memory {
  double every_s = 0;
  int processes_sampled = 0;
  std::vector<ProcessSamples> processes;
  std::optional<OomFacts> oom;
};

// variant.process_ends: the program's processes that did not exit 0.
struct ProcessEnd {
  int pid = 0;
  std::string what;
  std::string how;
  std::string where;
  std::string why;
};
struct ProcessEndList {
  int count = 0;
  std::vector<ProcessEnd> list;  // the first 100
};
struct ProcessEnds {
  ProcessEndList failed;
  ProcessEndList not_counted;
};

// variant.stall: the first stall while a program was left running, and its stacks then.
struct Stall {
  std::string kind;  // tree, process
  std::optional<StuckProcess> process;
  double after_s = 0;
  double still_s = 0;
  std::string waiting_in;
  int processes = 0;
  int threads = 0;
  std::optional<double> resumed_after_s;
  std::vector<Thread> stacks;
  std::string stacks_method;
  std::string stacks_note;
  std::string stacks_python_note;
};

// forkcheck watch: one fork of the program (details.forks[]), as the preloaded library saw it
// and the harness judged it (harness/watch/fork_events.h, fork_hazards.h).
struct ForkHazard {
  std::string kind;  // thread-pool, threads, cuda
  std::string runtime;
  std::string what;
  std::string why;
  std::string instead;
  std::optional<int> threads;
  bool allowed = false;  // its kind was accepted with --allow
};
struct ForkThread {
  int tid = 0;
  std::string name;
  bool main = false;
};
struct ChildEnd {
  std::string how;  // exited, killed, unknown
  std::optional<long long> code;
  std::optional<long long> signal;
  std::string signal_name;
  bool core = false;
  std::string via;
  std::string seen_by;
  std::string note;
};
struct ForkEvent {
  int index = 0;  // fork N, as every format names it
  int pid = 0;
  int child = 0;
  std::string command;
  bool exec = false;
  std::string exec_path;
  std::vector<std::string> exec_argv;
  std::optional<int> exec_errno;
  std::string exec_error;
  std::vector<ForkHazard> hazards;
  bool allowed = false;  // every hazard of it was allowed
  std::vector<std::string> advice;
  std::vector<std::string> notes;  // what was seen and not counted a hazard, and why
  long long seq = 0;
  std::optional<double> at_s;
  int threads = 0;
  std::optional<ForkThread> thread;
  nlohmann::json thread_list;  // the threads alive (where Python started them, when told)
  std::optional<int> threads_listed;
  bool truncated = false;
  std::vector<std::string> runtimes;
  nlohmann::json cuda;  // loaded, initialised, devices
  std::vector<std::string> backtrace;
  nlohmann::json python;  // the Python stack that forked (site, stack)
  std::optional<ChildEnd> child_end;
};

// forkcheck watch: details.watch, the totals and the findings by hazard kind.
struct WatchTotals {
  int forks = 0;
  int hazardous = 0;
  int failing = 0;  // hazardous forks not allowed: they fail the watch
  int allowed = 0;
  int safe = 0;
  int exec = 0;
  std::vector<std::string> runtimes;
};
struct WatchFinding {
  std::string kind;
  std::string runtime;
  std::string title;
  bool allowed = false;
  int forks = 0;
  std::vector<int> fork_indices;
  std::string what;
  std::string why;
  std::vector<std::string> fix;
};
struct WatchSummary {
  WatchTotals totals;
  std::vector<WatchFinding> findings;
  std::vector<std::string> allowed_kinds;
  std::string events_dir;
  int event_files = 0;
  int bad_event_lines = 0;
  int forks_listed = 0;
  std::string preload;
};

// variant.python (exec, watch, matrix): what the program's Python processes told through
// forkcheck's bootstrap (docs/python.md), as the harness kept it (python_channel_posix.cc: each
// event's fields checked and bounded). A process's `python` and `torch` facts, and a fork's
// `torch`, stay JSON: they are the interpreter's and torch's own words, read by few.

// The test a test runner said runs in a process: pytest's PYTEST_CURRENT_TEST, or unittest's id.
struct PythonTest {
  std::string name;
  std::string by;  // pytest, unittest
  std::optional<double> since_s;
};

// A Python thread of a process: its hello's main thread, a thread it started, one alive at a fork.
struct PythonThread {
  std::optional<unsigned long long> ident;  // CPython's threading.get_ident()
  std::optional<long long> native_id;
  std::string name;
  std::string target;
  std::optional<bool> daemon;
  std::optional<PythonFrame> started_at;
  std::optional<double> at_s;
};

// An exception that ended a process's main module (`where` main), a Process's target (process),
// a thread (thread), or an os._exit() of the program's own (exit: `type` is the call).
struct PythonException {
  std::string where;
  std::string type;
  std::string message;
  std::vector<PythonFrame> frames;  // innermost last
  std::string thread_name;
  std::string process_name;
  std::optional<PythonTest> test;
  std::optional<double> at_s;
};

// A child's end as its Python parent learnt it (returncode < 0: the signal that killed it).
struct PythonChildExit {
  std::optional<long long> pid;
  std::optional<long long> returncode;
  std::string via;    // how the parent learnt it: join, wait, poll...
  std::string asked;  // terminate or kill, when the program itself asked for the end
  std::string name;
  std::string target;
  std::string signal;  // the signal's name, where returncode < 0
  std::optional<PythonTest> test;
  std::optional<double> at_s;
};

// Where the program named a start method (set_start_method, get_context).
struct PythonStartMethod {
  std::string method;
  std::optional<PythonFrame> where;
  std::string overridden_by;       // --force-start-method: the method imposed there
  std::optional<long long> count;  // the same choice at the same line, more than once
};

// The program asked for a child's end: terminate() or kill() (`by`: the library or the program).
struct PythonEndAsked {
  std::optional<long long> child;
  std::string how;
  std::string by;
  std::optional<PythonFrame> where;
  std::optional<double> at_s;
};

// A signal a process of the program sent (to a pid, or a group: `to` negative or `group`).
struct PythonSignalSent {
  std::optional<long long> to;
  bool group = false;
  std::optional<long long> signal;
  std::optional<PythonFrame> where;
  std::optional<double> at_s;
};

// The program looked at a child's end: read its exit code, or was given its status.
struct PythonEndLooked {
  std::optional<long long> child;
  std::optional<long long> code;
  std::string via;  // exitcode, returncode, or subprocess's call that gave it
  std::optional<PythonFrame> where;
  std::optional<double> at_s;
};

// A ProcessPoolExecutor broken by the death of its workers.
struct PythonPoolBroken {
  std::vector<long long> workers;
  std::optional<double> at_s;
};

// A signal handler the program set.
struct PythonSignalHandler {
  std::string signal;
  std::string handler;
  std::optional<PythonFrame> where;
  std::optional<double> at_s;
};

// A fork the process made, or several alike folded into one entry (`seq` to `last_seq`).
struct PythonFork {
  std::optional<long long> seq;
  std::optional<long long> last_seq;
  std::optional<long long> folded;    // how many forks the entry stands for
  std::vector<PythonFrame> stack;     // the Python stack that forked, innermost last
  std::vector<PythonThread> threads;  // the other threads alive then
  std::optional<long long> native_threads;
  nlohmann::json torch;
  std::string start_method;
  std::optional<double> at_s;
  std::optional<double> last_at_s;
};

struct PythonExit {
  nlohmann::json code;  // sys.exit's argument as the bootstrap saw it: a number, text or null
  std::optional<double> at_s;
};

// A fatal signal's dump (faulthandler): the crash's Python frames, thread by thread.
struct PythonCrashThread {
  std::optional<unsigned long long> ident;
  bool current = false;             // the thread that took the signal
  std::vector<PythonFrame> frames;  // innermost first
};
struct PythonCrash {
  std::string fatal;
  std::string dumped_by;     // faulthandler (forkcheck's), or the program's own faulthandler
  std::string written_to;    // stderr, when read from the program's own output
  std::string rearmed_over;  // whose handlers forkcheck put faulthandler's back over
  std::vector<PythonCrashThread> threads;
};

// Where the interpreter's own and installed code lives: what is not the user's.
struct PythonPaths {
  std::string stdlib;
  std::string platstdlib;
  std::string purelib;
  std::string platlib;
  std::vector<std::string> site_packages;
};

struct PythonInterpreter {
  std::string version;
  std::string implementation;
  std::string executable;
};

// One Python process of the tree: its hello, then what it told as it ran.
struct PythonProcess {
  std::optional<long long> pid;
  std::optional<long long> ppid;
  std::string born;                   // exec, fork, spawn...
  std::optional<long long> fork_seq;  // born of a fork: which of its parent's
  std::optional<long long> dump_signal;
  std::optional<long long> stacks_signal;
  std::string start_method;
  std::optional<PythonInterpreter> python;
  std::optional<PythonThread> main_thread;
  std::vector<std::string> argv;
  std::string cwd;
  std::string crash_dumps;  // where its fatal-signal dumps go: forkcheck's file, or the program's
  std::optional<PythonPaths> paths;
  std::vector<PythonThread> threads;
  std::vector<PythonFork> forks;
  std::vector<PythonException> exceptions;
  std::vector<PythonChildExit> child_exits;
  std::vector<PythonStartMethod> start_methods;
  std::vector<PythonEndAsked> ends_asked;
  std::vector<PythonSignalHandler> signal_handlers;
  std::vector<PythonSignalSent> signals_sent;
  std::vector<PythonEndLooked> ends_looked;
  std::vector<PythonPoolBroken> pools_broken;
  nlohmann::json torch;
  std::optional<PythonExit> exit;
  std::optional<PythonTest> test;  // the test running in it when it was last heard of
  std::optional<double> first_seen_s;
  std::optional<double> gone_s;  // its events connection closed
  std::optional<PythonCrash> crash;
};

struct PythonSide {
  std::vector<PythonProcess> processes;
  std::optional<long long> dropped;
  std::map<std::string, long long> dropped_by;
  std::map<std::string, long long> bounds;
  std::optional<long long> quiet_folded;
};

// details.explained_by[]: a message of the program's failure that a catalog case explains
// (harness/catalog/known_messages.h), matched without starting any program.
struct ExplainedBy {
  std::string case_id;  // "case" in the report: a C++ keyword
  std::string title;
  std::string pattern;
  std::string fix;
};
// details.fork_guards[]: where the code that forked beside other threads stands against the main
// guard (harness/watch/main_guard.h), for the fork entry `seq` (to `last_seq`) of process `pid`.
struct ForkGuard {
  std::optional<long long> pid;
  std::optional<long long> seq;
  std::optional<long long> last_seq;
  std::string guard;  // guarded, unguarded, unknown
  std::string file;
  std::optional<long long> line;
};
// details.worker_homes[]: where a hung worker's function is defined (harness/watch/worker_home.h).
struct WorkerHomeFact {
  std::optional<long long> pid;
  std::string function;
  std::string file;
  std::optional<long long> line;
  std::string home;        // module, main-guard, nested, unknown
  std::string class_name;  // "class" in the report: a method's class
  std::optional<long long> class_line;
};

struct Variant {
  std::string name;
  std::string start_method;  // fork, spawn, forkserver, none
  std::string role;          // hazard, fix, subject
  std::string expected;
  std::string expected_why;
  std::string description;
  std::string skip_reason;
  std::string outcome;
  bool matched = false;
  std::string message;
  std::string note;
  double duration_s = 0;
  Exit exit;
  // "stdout" and "stderr" in the report: those names are macros on Windows.
  std::string stdout_text;
  std::string stderr_text;
  nlohmann::json output_bytes;
  nlohmann::json details = nlohmann::json::object();
  nlohmann::json steps;
  Watchdog watchdog;
  std::optional<StepHang> hang;
  std::optional<ProtocolError> protocol_error;
  std::optional<Cause> cause;
  std::optional<WaitChain> wait_chain;
  std::vector<Thread> stacks;
  std::string stacks_method;
  std::optional<int> pid;  // exec and watch: the program's own process
  std::optional<Memory> memory;
  std::optional<ProcessEnds> process_ends;
  std::string python_note;
  std::optional<PythonSide> python;
  std::string stacks_note;
  std::optional<Stall> stall;
  std::string stacks_python_note;
  std::string started_via;  // exec, zygote, attach
  std::string start_note;
  bool harness_error = false;
  bool not_run = false;
  bool interrupted = false;
  // forkcheck watch: details.forks and details.watch, read from `details` (which keeps them too).
  std::vector<ForkEvent> forks;
  std::optional<WatchSummary> watch;
  // exec and matrix: details.explained_by, details.fork_guards and details.worker_homes.
  std::vector<ExplainedBy> explained_by;
  std::vector<ForkGuard> fork_guards;
  std::vector<WorkerHomeFact> worker_homes;
  // From the catalog's plan: the variant's own program, its environment, a wait by design.
  std::string program;
  std::map<std::string, std::string> env;
  std::optional<double> waits_s;
};

// run.environment: the fingerprint (a repro program's, or forkcheck's own for a user's program),
// what forkcheck measured of the machine, and the Python side's facts. The parts the formats read
// as facts are typed; the repro program's own lists and libtorch's build (rendered as they come,
// and diffed key by key: environment_diff.cc) stay JSON.
struct EnvDevShm {
  std::string path;
  std::optional<double> size_bytes;
  std::optional<double> free_bytes;
  std::string absent;  // why it cannot be used
};
struct EnvOpenFiles {
  nlohmann::json soft;  // a number, or "unlimited"
  nlohmann::json hard;
};
struct EnvMachineCpus {
  std::optional<double> online;
  std::optional<double> affinity;      // CPUs in this process's affinity mask
  std::optional<double> cgroup_quota;  // cpu.max, in CPUs
};
// What forkcheck measured of the machine itself.
struct EnvMachine {
  std::string os;
  std::optional<EnvDevShm> dev_shm;
  std::optional<EnvOpenFiles> open_files;
  std::optional<EnvMachineCpus> cpus;
  std::map<std::string, std::string> variables;  // OMP_*, MKL_*, KMP_*, GOMP_*
};
struct EnvInterpreter {
  std::string version;
  std::string implementation;
  std::string executable;
  std::string prefix;
  bool debug_build = false;
};
struct EnvTorchThreads {
  std::optional<long long> intra_op;
  std::optional<long long> inter_op;
};
struct EnvCudaDevice {
  std::optional<long long> index;
  std::string name;
  std::string capability;
  std::optional<double> memory_bytes;
};
struct EnvTorchCuda {
  bool available = false;
  std::optional<long long> device_count;
  std::vector<EnvCudaDevice> devices;
  std::string error;
};
// The torch a Python imports, as the probe (or the program's bootstrap) saw it; `missing` or
// `error` where it could not be imported.
struct EnvTorch {
  std::string version;
  std::string path;
  bool debug = false;
  std::string cuda_build;
  std::string hip_build;
  std::optional<long long> cudnn;
  std::optional<EnvTorchThreads> threads;
  std::string parallel_backend;
  std::string openmp;
  std::vector<std::string> openmp_runtimes;  // the OpenMP libraries mapped into it
  std::optional<EnvTorchCuda> cuda;
  std::string sharing_strategy;
  std::string missing;
  std::string error;
};
struct EnvModule {
  std::string version;
  std::string missing;
  std::string error;
};
struct EnvMultiprocessing {
  std::string default_start_method;
  std::vector<std::string> start_methods;
  std::string error;
};
// The Python side: `forkcheck env`'s probe of the Python on PATH (or --python), or a user's
// program's own (its bootstrap's facts, `source` "bootstrap").
struct EnvPython {
  std::string asked;
  std::string interpreter;
  std::string status;  // ok, no-python, failed, timed-out
  std::string error;
  std::string hint;
  std::string source;
  std::optional<EnvInterpreter> python;
  std::optional<EnvTorch> torch;
  std::optional<EnvModule> numpy;
  std::optional<EnvMultiprocessing> multiprocessing;
};
// The repro program's default thread counts.
struct EnvThreads {
  std::optional<long long> nproc;
  std::optional<long long> omp_get_max_threads;
  std::optional<long long> torch_intra_op;
  std::optional<long long> torch_inter_op;
};
// A build of the torch cases recorded here (torch_cases.last_build).
struct TorchBuild {
  std::string program;
  std::optional<double> build_s;
  std::string built_at;
  std::optional<long long> jobs;
  std::string cmake;
  std::string compiler;
  std::string torch;
  std::string python;
  std::string log;
};
// A package's torch cases without the torch program: built here against the user's torch, or why
// none ran (harness/torch/torch_kit.h records it; reports/torch_cases.h words it).
struct TorchCases {
  std::string source;  // built-in, built-here, none
  std::string why;
  std::string detail;
  std::vector<std::string> cases;
  std::string python;
  std::string torch;
  std::optional<double> build_s;
  std::string built_at;
  std::string program;
  std::string log;
  std::string package_dir;
  std::string build_dir;
  std::string cmake;
  std::string compiler;
  std::optional<long long> jobs;
  bool built_now = false;
  std::optional<TorchBuild> last_build;
};

// A risk the measured facts show (ticket_environment.h lists their ids).
struct EnvRisk {
  std::string id;
  std::string note;
  std::string why;
  std::string case_id;  // "case" in the report: a C++ keyword
};
// Which program collected the environment (a repro program, or forkcheck itself for a user's).
struct EnvCollectedBy {
  std::string program;
  std::optional<long long> pid;
  std::string fallback;  // why the torch program did not answer
  std::string note;
  std::optional<bool> torch_program;  // false: a forkcheck built without libtorch
  bool user_program = false;          // forkcheck's own facts of a user's program
};
// The catalog's libtorch, as the torch program that collected the environment loaded it.
struct EnvLibtorch {
  std::string version;
  std::string config;         // its build settings, as libtorch prints them
  std::string parallel_info;  // at::get_parallel_info()
  std::optional<bool> has_openmp;
  std::optional<bool> has_mkl;
  std::optional<bool> has_mkldnn;
  std::optional<bool> has_lapack;
  std::string openmp_version;
  std::optional<long long> cuda_devices;
};
// The torch the python3 on PATH imports, found without importing it
// (harness/python_facts/python_torch.h).
struct EnvPythonTorch {
  std::string interpreter;
  std::string status;  // found, no-torch, no-python, failed
  std::string error;
  std::string package_dir;
  std::string version;
  std::string cuda;  // its CUDA version; "" for a CPU build
  std::string git_version;
  std::optional<bool> debug;
  std::string libtorch_cpu;  // the real path of its libtorch_cpu
};
// The catalog's libtorch in one line's facts: its version, and the real path of the
// libtorch_cpu the torch program mapped ("library"; a repro program's program_facts too).
struct CatalogLibtorch {
  std::string version;
  std::string library;
};
struct Environment {
  std::string error;  // neither repro program could collect it
  std::optional<EnvMachine> machine;
  std::optional<EnvPython> python;
  std::optional<EnvPythonTorch> python_torch;
  std::vector<EnvRisk> risks;
  std::optional<EnvCollectedBy> collected_by;
  std::optional<TorchCases> torch_cases;
  nlohmann::json os;
  nlohmann::json libc;
  std::string compiler;
  nlohmann::json cpus;
  std::vector<std::string> start_methods;
  nlohmann::json ptrace_scope;
  std::map<std::string, std::string> variables;
  std::optional<EnvThreads> threads;
  nlohmann::json cuda;
  nlohmann::json libraries;
  nlohmann::json openmp_runtimes;
  nlohmann::json blas;
  std::optional<EnvLibtorch> libtorch;
};

struct Source {
  std::string title;
  std::string author;
  std::string document;
  std::string url;
};

// case.explains[]: an error message the case's failure shows as, and its fix.
struct Explain {
  std::string pattern;
  std::string fix;
};

struct NotSelected {
  std::string name;
  std::string role;
};

struct Case {
  std::string id;
  std::string title;
  Source source;
  std::string reported;
  std::string mechanism;
  std::string platforms;
  std::vector<std::string> environment_topics;
  bool featured = false;
  std::string program;
  std::vector<std::string> command;  // exec, watch, matrix, attach: the user's command
  std::vector<Explain> explains;
  int program_libraries = 0;
  std::vector<std::string> shows_as;
  std::string verdict;
  std::string verdict_reason;
  std::vector<NotSelected> not_selected;
  std::vector<Variant> variants;
};

// report.run: the run's header (command, argv, options, times) and its end.
struct Run {
  std::string schema_version;
  std::string command;
  std::vector<std::string> argv;
  std::string started_at;
  std::string finished_at;
  std::optional<double> duration_s;
  bool interrupted = false;
  bool complete = true;  // false only where the report says so: its run log had no end line
  nlohmann::json options = nlohmann::json::object();
  nlohmann::json platform = nlohmann::json::object();
  std::vector<std::string> catalog_errors;
  Environment environment;  // as written: Report::document's run.environment
};

struct Summary {
  int cases = 0;
  int variants = 0;
  std::map<std::string, int> by_verdict;
  std::map<std::string, int> by_outcome;
  int mismatches = 0;
  int regressions = 0;
  int harness_failures = 0;
  std::optional<bool> ok;  // absent: the report does not say (never said to have failed)
};

struct Tool {
  std::string name;
  std::string version;
};

struct Report {
  std::string schema_version;
  Tool tool;
  Run run;
  std::vector<Case> cases;
  Summary summary;
  // The report as read. report.json is written from it as it is: the one format that writes the
  // report itself, every key included. The other formats read the typed members.
  nlohmann::json document;
};

// The model of a report (report.json's content). Never throws on a report's shape.
Report read_report(const nlohmann::json& report);
// One variant's record (a run log's "variant" line, or an element of a case's variants).
Variant read_variant(const nlohmann::json& variant);
std::vector<Thread> read_stacks(const nlohmann::json& stacks);

}  // namespace fc::reports
