// The supervisor's mechanism on Windows: what supervisor_posix.cc does, with a job object where
// POSIX has a process group. What it decides is the watchdog's (watchdog.h), as on POSIX.
//
// The tree. Each child is created suspended (CREATE_SUSPENDED), assigned to a job object of its
// own, then resumed: it cannot start anything before it is in the job, and everything it starts
// is in the job too (no process can leave one). The job is created with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE and forkcheck holds the only handle, so should forkcheck die
// the kernel kills the tree (guardian_win32.cc). The child also leads a console process group of
// its own (CREATE_NEW_PROCESS_GROUP): the user's Ctrl-C reaches forkcheck, not the child.
//
// I/O. stdin is NUL; stdout and stderr go into anonymous pipes. Anonymous pipes have no
// overlapped I/O, so each is drained by a thread of its own (PipeReader), which hands the bytes to
// the supervisor's thread; only that thread touches the captures and the channel reader. The
// channel is a third pipe. A Windows child receives handles, not file descriptors:
// FORKCHECK_CHANNEL_FD holds the inherited write end's HANDLE value in decimal (handle values fit
// in 32 bits, also in 64-bit processes), and a child writes to it with WriteFile, or turns it into
// a C runtime descriptor with _open_osfhandle. Exactly these handles are inherited (the
// PROC_THREAD_ATTRIBUTE_HANDLE_LIST), so no child ever holds another child's pipes.
//
// The loop. One WaitForMultipleObjects on the children's process handles, a wake-up event
// (Ctrl-C, bytes from a reader) and the next time a watchdog wants to be asked. Windows has no
// SIGTERM: the polite request is CTRL_BREAK_EVENT to the child's process group (a console
// program can handle it, and dies of it by default; it reaches only a child on forkcheck's
// console), the end TerminateJobObject, the whole tree at once. Without a shared console there is
// nothing polite to send and the tree is terminated at once. ChildResult's sent_sigterm and
// sent_sigkill record those two steps. What the watchdog is told at each look comes from the
// job's accounting (every process it ever held, the ended ones too) and each process's CPU
// time; Windows tells no thread states, so no thread is known to be starved or stuck there, and
// a process whose CPU time did not move is taken for asleep. Stacks are walked with dbghelp
// (stacks/dbghelp_win32.cc), in this loop: a walk suspends each thread for a moment.
//
// Threads are harmless here: Windows has no fork(), so the POSIX supervisor's reason to stay
// single-threaded does not apply.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cwchar>
#include <filesystem>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "harness/platform/host.h"
#include "harness/platform/process_info.h"
#include "harness/platform/win32.h"
#include "harness/supervise/channel_reader.h"
#include "harness/supervise/clock.h"
#include "harness/supervise/guardian.h"
#include "harness/supervise/interrupt.h"
#include "harness/supervise/job_core.h"
#include "harness/supervise/run_loop.h"
#include "harness/supervise/supervisor.h"
#include "harness/supervise/watchdog.h"
#include "launch/process_tree.h"
#include "launch/tree_activity.h"

// Toolhelp's header needs <windows.h> first; win32.h is the one place that includes it.
#include <tlhelp32.h>

namespace fc::harness {
namespace {

using std::chrono::milliseconds;
using win32::Handle;

// TerminateJobObject gives every process it ends this exit code: 128 + SIGKILL, what a POSIX
// shell shows for a killed process. Why it was killed is in the watchdog's own record.
constexpr UINT kKilledExitCode = 137;
constexpr DWORD kPipeBuffer = 64 * 1024;

// Drains one pipe on a thread of its own. The thread appends what it reads under a lock and sets
// the supervisor's data event; the supervisor takes the bytes on its own thread.
class PipeReader {
 public:
  PipeReader(Handle pipe, HANDLE data_event) : pipe_(std::move(pipe)), data_event_(data_event) {
    thread_.reset(::CreateThread(nullptr, 0, &PipeReader::thread_main, this, 0, nullptr));
    if (!thread_) eof_ = true;  // nothing will be read; the child's output is lost, not waited for
  }
  PipeReader(const PipeReader&) = delete;
  PipeReader& operator=(const PipeReader&) = delete;
  ~PipeReader() { stop(); }

  // Moves what arrived into `out`; true once the writers are gone and everything was taken.
  bool take(std::string& out) {
    std::lock_guard<std::mutex> lock(mu_);
    out.append(buf_);
    buf_.clear();
    return eof_;
  }

  // Ends the thread: at once when the pipe is at EOF, else after cancelling its read. What it
  // read before stays for take().
  void stop() {
    if (!thread_) return;
    stopping_ = true;
    // The read may not have begun when CancelSynchronousIo runs: cancel until the thread is gone.
    while (::WaitForSingleObject(thread_.get(), 10) == WAIT_TIMEOUT)
      ::CancelSynchronousIo(thread_.get());
    thread_.reset();
  }

 private:
  static DWORD WINAPI thread_main(void* self) {
    static_cast<PipeReader*>(self)->loop();
    return 0;
  }

  void loop() {
    char chunk[16384];
    for (;;) {
      DWORD n = 0;
      if (stopping_ || !::ReadFile(pipe_.get(), chunk, sizeof chunk, &n, nullptr) || n == 0) break;
      std::lock_guard<std::mutex> lock(mu_);
      buf_.append(chunk, n);
      ::SetEvent(data_event_);
    }
    // ERROR_BROKEN_PIPE: every write end is closed, the usual end. Any other error, or a
    // cancelled read, ends the stream too.
    std::lock_guard<std::mutex> lock(mu_);
    eof_ = true;
    ::SetEvent(data_event_);
  }

  Handle pipe_;
  HANDLE data_event_;
  Handle thread_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::string buf_;
  bool eof_ = false;
};

struct Pipe {
  Handle read, write;  // neither inheritable; the child's end is made so just for CreateProcess
};

bool make_pipe(Pipe& p) {
  HANDLE r = nullptr, w = nullptr;
  if (!::CreatePipe(&r, &w, nullptr, kPipeBuffer)) return false;
  p.read.reset(r);
  p.write.reset(w);
  return true;
}

// CreateProcessW wants a full file name. A bare name is looked up as Windows looks up programs
// (find_in_path), and a name without an extension gets ".exe", as cmd.exe would run it (the
// repro programs are named without one).
std::wstring resolve_program(const std::string& name) {
  const std::wstring w = win32::widen(name);
  if (w.find_first_of(L"\\/:") == std::wstring::npos) {
    const std::string found = find_in_path(name);
    return found.empty() ? w : win32::widen(found);  // not found: CreateProcessW will say so
  }
  std::error_code ec;
  const std::filesystem::path p(w);
  if (!std::filesystem::exists(p, ec) && !p.has_extension() &&
      std::filesystem::exists(std::filesystem::path(w + L".exe"), ec))
    return w + L".exe";
  return w;
}

// Windows environment variable names are case-insensitive, and CreateProcess wants the block
// sorted the way the system compares names.
struct NameLess {
  bool operator()(const std::wstring& a, const std::wstring& b) const {
    return ::CompareStringOrdinal(a.c_str(), static_cast<int>(a.size()), b.c_str(),
                                  static_cast<int>(b.size()), TRUE) == CSTR_LESS_THAN;
  }
};

// forkcheck's environment with the spec's variables, the job's token and the channel's handle:
// "NAME=value\0...\0\0".
std::wstring environment_block(const LaunchSpec& spec, const std::string& token, HANDLE channel) {
  std::map<std::wstring, std::wstring, NameLess> vars;  // name -> "NAME=value"
  if (wchar_t* block = ::GetEnvironmentStringsW()) {
    for (const wchar_t* e = block; *e != L'\0'; e += std::wcslen(e) + 1) {
      const std::wstring entry(e);
      // Names may start with '=' (the per-drive directories, "=C:=C:\dir"): split after it.
      const size_t eq = entry.find(L'=', 1);
      if (eq != std::wstring::npos) vars[entry.substr(0, eq)] = entry;
    }
    ::FreeEnvironmentStringsW(block);
  }
  auto set = [&](const std::string& name, const std::string& value) {
    const std::wstring n = win32::widen(name);
    vars.erase(n);  // the inherited spelling of the name goes too
    vars[n] = n + L"=" + win32::widen(value);
  };
  for (const auto& [k, v] : spec.env) set(k, v);
  set(kRunTokenVar, token);
  if (channel != nullptr)
    set("FORKCHECK_CHANNEL_FD", std::to_string(reinterpret_cast<uintptr_t>(channel)));
  else
    vars.erase(L"FORKCHECK_CHANNEL_FD");
  std::wstring out;
  for (const auto& [name, entry] : vars) {
    out += entry;
    out += L'\0';
  }
  out += L'\0';
  return out;
}

// The processes still in a job.
std::vector<ProcessId> job_processes(HANDLE job) {
  std::vector<unsigned char> buf(sizeof(JOBOBJECT_BASIC_PROCESS_ID_LIST) + 64 * sizeof(ULONG_PTR));
  for (;;) {
    auto* list = reinterpret_cast<JOBOBJECT_BASIC_PROCESS_ID_LIST*>(buf.data());
    if (::QueryInformationJobObject(job, JobObjectBasicProcessIdList, list,
                                    static_cast<DWORD>(buf.size()), nullptr) ||
        ::GetLastError() == ERROR_MORE_DATA) {
      if (list->NumberOfProcessIdsInList < list->NumberOfAssignedProcesses) {
        buf.resize(sizeof(JOBOBJECT_BASIC_PROCESS_ID_LIST) +
                   (list->NumberOfAssignedProcesses + 16) * sizeof(ULONG_PTR));
        continue;
      }
      std::vector<ProcessId> pids;
      for (DWORD i = 0; i < list->NumberOfProcessIdsInList; ++i)
        pids.push_back(static_cast<ProcessId>(list->ProcessIdList[i]));
      return pids;
    }
    return {};
  }
}

class WinControl;

struct Job : JobCore {
  using JobCore::JobCore;

  Handle job, process;
  std::unique_ptr<PipeReader> readers[3];  // stdout, stderr, channel
  bool open[3] = {false, false, false};
  std::unique_ptr<WinControl> control;
  std::uint64_t cpu_100ns = 0;  // the job's CPU time at the last look
  DWORD processes_total = 0, processes_active = 0;
  std::map<ProcessId, std::uint64_t> process_cpu;  // each process's CPU at the last look

  bool pipes_open() const { return open[0] || open[1] || open[2]; }
};

// A look at the job's accounting, fed to its watchdog: its CPU time since the last look, and
// whether a process came (TotalProcesses grew) or went (ActiveProcesses changed).
void look(Job& j, Clock::time_point now) {
  JOBOBJECT_BASIC_ACCOUNTING_INFORMATION info{};
  if (!::QueryInformationJobObject(j.job.get(), JobObjectBasicAccountingInformation, &info,
                                   sizeof info, nullptr))
    return;
  const std::uint64_t cpu = static_cast<std::uint64_t>(info.TotalUserTime.QuadPart) +
                            static_cast<std::uint64_t>(info.TotalKernelTime.QuadPart);
  LookFacts f;
  f.at = now;
  f.change.cpu_ns = (cpu >= j.cpu_100ns ? cpu - j.cpu_100ns : 0) * 100;
  f.change.membership_changed =
      info.TotalProcesses != j.processes_total || info.ActiveProcesses != j.processes_active;
  j.cpu_100ns = cpu;
  j.processes_total = info.TotalProcesses;
  j.processes_active = info.ActiveProcesses;
  std::map<ProcessId, std::uint64_t> process_cpu;
  for (ProcessId p : job_processes(j.job.get())) {
    ++f.processes;
    f.pids.push_back(p);
    const auto threads = launch::thread_facts(p);
    const std::uint64_t ns = threads.empty() ? 0 : threads.begin()->second.cpu_ns;
    process_cpu[p] = ns;
    auto was = j.process_cpu.find(p);
    if (was != j.process_cpu.end() && was->second == ns) f.asleep.insert(p);
  }
  j.process_cpu = std::move(process_cpu);
  j.watchdog->looked(f);
}

// The threads of the job's processes, from one Toolhelp snapshot.
std::size_t thread_count(const std::vector<ProcessId>& pids) {
  Handle snapshot(::CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0));
  if (!snapshot) return 0;
  std::size_t n = 0;
  THREADENTRY32 e{};
  e.dwSize = sizeof e;
  for (BOOL ok = ::Thread32First(snapshot.get(), &e); ok; ok = ::Thread32Next(snapshot.get(), &e))
    if (std::find(pids.begin(), pids.end(), static_cast<ProcessId>(e.th32OwnerProcessID)) !=
        pids.end())
      ++n;
  return n;
}

bool ended_now(Job& job, Clock::time_point now) {
  if (job.ended_at) return true;
  if (::WaitForSingleObject(job.process.get(), 0) != WAIT_OBJECT_0) return false;
  DWORD code = 0;
  ::GetExitCodeProcess(job.process.get(), &code);
  job.r.exit = ExitStatus::from_wait_status(static_cast<int>(code));
  job.exited(now);
  return true;
}

class WinControl : public TreeControl {
 public:
  explicit WinControl(Job& job) : job_(job) {}
  void look_now() override { look(job_, Clock::now()); }
  // dbghelp walks in this loop, within the budget: the stacks are in when it returns.
  void take_stacks(const StacksRequest& request) override {
    std::vector<ProcessId> pids;
    for (const auto& [pid, attach] : request.processes)
      if (attach != Attach::kNone) pids.push_back(pid);
    Stacks stacks = pids.empty()
                        ? Stacks{"none", "no process was asleep to walk", "", {}}
                        : collect_stacks(pids, request.budget_s, [] { return interrupted() != 0; });
    job_.watchdog->stacks_in(std::move(stacks), Clock::now());
  }
  void stop_stacks(const std::string&) override {}  // nothing runs beside the loop here
  void describe(TreeFacts& t) override {
    const auto pids = job_processes(job_.job.get());
    t.processes = pids.size();
    t.threads = thread_count(pids);
  }
  WaitGraphFacts wait_graph() override { return read_wait_graph(job_.r.pid, {}); }
  Sent ask_to_end() override {
    const bool alive = !ended_now(job_, Clock::now());
    if (::GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, static_cast<DWORD>(job_.r.pid)))
      return alive ? Sent::kRequest : Sent::kNothing;
    ::TerminateJobObject(job_.job.get(), kKilledExitCode);  // no shared console: nothing polite
    return alive ? Sent::kKill : Sent::kNothing;
  }
  bool kill_all() override {
    const bool alive = !ended_now(job_, Clock::now());
    ::TerminateJobObject(job_.job.get(), kKilledExitCode);
    return alive;
  }

 private:
  Job& job_;
};

// Starts the child; on failure returns the job with r.started == false and the reason.
std::unique_ptr<Job> start_job(size_t index, const LaunchSpec& spec, HANDLE data_event) {
  auto job = std::make_unique<Job>(index, spec);
  if (spec.attach_pid > 0) {  // the command refuses it on Windows first (attach_command.cc)
    job->refuse("watching a running process is not available on Windows");
    return job;
  }
  if (spec.argv.empty()) {
    job->refuse("no command given");
    return job;
  }
  auto fail = [&](const std::string& what) {
    job->cannot_start(what + ": " + win32::error_text(::GetLastError()));
    return std::move(job);
  };

  Pipe out, err, chan;
  if (!make_pipe(out) || !make_pipe(err) || (spec.channel && !make_pipe(chan)))
    return fail("CreatePipe");
  SECURITY_ATTRIBUTES inherit{static_cast<DWORD>(sizeof(SECURITY_ATTRIBUTES)), nullptr, TRUE};
  Handle null_in(::CreateFileW(L"NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &inherit,
                               OPEN_EXISTING, 0, nullptr));
  if (!null_in) return fail("opening NUL");
  std::vector<HANDLE> inherited = {null_in.get(), out.write.get(), err.write.get()};
  if (spec.channel) inherited.push_back(chan.write.get());
  for (size_t i = 1; i < inherited.size(); ++i)
    if (!::SetHandleInformation(inherited[i], HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT))
      return fail("SetHandleInformation");

  // Exactly these handles are inherited, whatever else is inheritable in forkcheck.
  SIZE_T attr_size = 0;
  ::InitializeProcThreadAttributeList(nullptr, 1, 0, &attr_size);
  std::vector<unsigned char> attr_buf(attr_size);
  auto* attrs = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(attr_buf.data());
  if (!::InitializeProcThreadAttributeList(attrs, 1, 0, &attr_size))
    return fail("InitializeProcThreadAttributeList");
  std::unique_ptr<std::remove_pointer_t<LPPROC_THREAD_ATTRIBUTE_LIST>,
                  decltype(&::DeleteProcThreadAttributeList)>
      attrs_guard(attrs, &::DeleteProcThreadAttributeList);
  if (!::UpdateProcThreadAttribute(attrs, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherited.data(),
                                   inherited.size() * sizeof(HANDLE), nullptr, nullptr))
    return fail("UpdateProcThreadAttribute");

  STARTUPINFOEXW si{};
  si.StartupInfo.cb = sizeof si;
  si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
  si.StartupInfo.hStdInput = null_in.get();
  si.StartupInfo.hStdOutput = out.write.get();
  si.StartupInfo.hStdError = err.write.get();
  si.lpAttributeList = attrs;

  static unsigned long serial = 0;
  job->token = run_token() + "-" + std::to_string(++serial);
  std::wstring env = environment_block(spec, job->token, spec.channel ? chan.write.get() : nullptr);
  const std::wstring program = resolve_program(spec.argv[0]);
  std::wstring command_line;
  win32::append_argument(command_line, program);
  for (size_t i = 1; i < spec.argv.size(); ++i)
    win32::append_argument(command_line, win32::widen(spec.argv[i]));

  // Without a console of our own, a console child would open a window; it runs without one.
  const DWORD flags = CREATE_SUSPENDED | CREATE_NEW_PROCESS_GROUP | CREATE_UNICODE_ENVIRONMENT |
                      EXTENDED_STARTUPINFO_PRESENT |
                      (::GetConsoleWindow() == nullptr ? CREATE_NO_WINDOW : 0);
  PROCESS_INFORMATION pi{};
  job->start = Clock::now();
  if (!::CreateProcessW(program.c_str(), command_line.data(), nullptr, nullptr, TRUE, flags,
                        env.data(), nullptr, &si.StartupInfo, &pi))
    return fail("CreateProcess");
  job->process.reset(pi.hProcess);
  Handle thread(pi.hThread);

  job->job.reset(::CreateJobObjectW(nullptr, nullptr));
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
  limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
  if (!job->job ||
      !::SetInformationJobObject(job->job.get(), JobObjectExtendedLimitInformation, &limits,
                                 sizeof limits) ||
      !::AssignProcessToJobObject(job->job.get(), job->process.get())) {
    // Never ran a single instruction of its own: end it before it does.
    const DWORD error = ::GetLastError();
    ::TerminateProcess(job->process.get(), kKilledExitCode);
    ::WaitForSingleObject(job->process.get(), INFINITE);
    ::SetLastError(error);
    return fail("putting it in a job object");
  }
  ::ResumeThread(thread.get());

  job->r.pid = static_cast<ProcessId>(pi.dwProcessId);
  job->r.started = true;
  // The Python bootstrap talks on a Unix socket with an abstract name (Linux): not offered here.
  if (!spec.python_bootstrap.empty())
    job->r.python_note =
        "the Python bootstrap is not offered on Windows: its channel is a Linux "
        "socket; Python frames come from no debugger here either";
  // Our copies of the child's ends close here (the Pipe handles go out of scope), so each reader
  // sees EOF once the tree has closed its own.
  job->readers[0] = std::make_unique<PipeReader>(std::move(out.read), data_event);
  job->readers[1] = std::make_unique<PipeReader>(std::move(err.read), data_event);
  if (spec.channel)
    job->readers[2] = std::make_unique<PipeReader>(std::move(chan.read), data_event);
  for (int k = 0; k < 3; ++k) job->open[k] = job->readers[k] != nullptr;
  job->control = std::make_unique<WinControl>(*job);
  job->watch(*job->control);
  look(*job, job->start);
  return job;
}

void drain(Job& job, Clock::time_point now) {
  for (int k = 0; k < 3; ++k) {
    if (!job.open[k]) continue;
    std::string bytes;
    const bool eof = job.readers[k]->take(bytes);
    job.output(k, bytes.data(), bytes.size(), now);
    if (eof) job.open[k] = false;
  }
}

void finish(Job& job, Clock::time_point now) {
  // Whatever of its tree outlived the child is still in the job: named, then ended with it.
  auto left = job_processes(job.job.get());
  if (!left.empty()) {
    ::TerminateJobObject(job.job.get(), kKilledExitCode);
    job.r.leftovers_killed.assign(left.begin(), left.end());
  }
  // With the tree gone the pipes reach EOF; a reader still blocked is cancelled. What they read
  // until then is kept.
  for (auto& reader : job.readers)
    if (reader) reader->stop();
  drain(job, now);
  for (auto& reader : job.readers) reader.reset();
  job.job.reset();  // kill-on-close: nothing of the tree can be left after this
  job.record_end();
}

// What the loop (run_loop.h) asks of Windows: one wait over the wake event, the pipe readers'
// data event and every job's process handle; exits from those handles; a job object per tree,
// so there are no orphans to adopt and nothing but the jobs' own children to end.
class WinOs {
 public:
  WinOs() : data_(::CreateEventW(nullptr, FALSE, FALSE, nullptr)) {}  // set by every PipeReader

  bool ours(const Job&) const { return true; }
  void round_begins(Clock::time_point) {}
  void interrupted() {}
  std::unique_ptr<Job> start(size_t index, const LaunchSpec& spec) {
    return start_job(index, spec, data_.get());
  }
  Clock::time_point wake_for(const Job&, Clock::time_point) const {
    return Clock::time_point::max();
  }
  Clock::time_point wait_and_read(const std::list<std::unique_ptr<Job>>& running,
                                  Clock::time_point wake) {
    std::vector<HANDLE> handles = {win32::wake_event(), data_.get()};
    bool unwatched = false;  // more children than one wait can hold: look at the rest often
    for (const auto& j : running) {
      if (j->ended_at) continue;
      if (handles.size() < MAXIMUM_WAIT_OBJECTS)
        handles.push_back(j->process.get());
      else
        unwatched = true;
    }
    auto wait_ms = std::chrono::duration_cast<milliseconds>(wake - Clock::now()).count();
    const auto ms = std::clamp<long long>(wait_ms + 1, 0, unwatched ? 50 : 1000);
    ::WaitForMultipleObjects(static_cast<DWORD>(handles.size()), handles.data(), FALSE,
                             static_cast<DWORD>(ms));
    const Clock::time_point now = Clock::now();
    for (const auto& j : running) drain(*j, now);
    return now;
  }
  void note_exit(Job& j, Clock::time_point now) { ended_now(j, now); }
  void before_looks(Clock::time_point) {}
  void look(Job& j, Clock::time_point now) { harness::look(j, now); }
  void after_looks(Clock::time_point) {}
  bool may_finish(const Job&) const { return true; }
  void finish(Job& j, Clock::time_point now) { harness::finish(j, now); }
  void not_ours_ended(Job&, Clock::time_point) {}
  void loop_ends() {}

 private:
  Handle data_;
};

}  // namespace

void Supervisor::run(const std::vector<LaunchSpec>& specs, int jobs, const Done& done) {
  std::list<std::unique_ptr<Job>> running;
  WinOs os;
  run_loop(specs, jobs, done, running, os);
}

// A job object holds each tree: no process of it can leave, nothing needs claiming.
void claim_every_child() {}

}  // namespace fc::harness
