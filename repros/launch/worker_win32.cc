// Worker::Impl on Windows: waiting for a spawned worker, reading its result,
// classifying its end (see worker_impl_win32.h).
#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>

#include "launch/worker_impl_win32.h"

namespace fc::launch {

using nlohmann::json;

namespace {

// TerminateProcess's exit code for a terminated worker, the one Python's multiprocessing uses
// on Windows: above every exit code a program gives and below every exception code.
constexpr UINT kTerminatedExitCode = 0x10000;

// An unhandled exception's code as the exit code (0xC0000005 and its kin, 0x80000003 for a
// breakpoint, 0xE06D7363 for an unhandled C++ exception), not a program's own exit(-1).
bool is_exception_code(DWORD code) {
  return (code & 0xFFFF0000u) == 0xC0000000u || code == 0x80000003u || code == 0xE06D7363u;
}

std::string hex(DWORD code) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08lX", static_cast<unsigned long>(code));
  return buf;
}

}  // namespace

Worker::Impl::Impl(std::string name, win32::Handle process, ProcessId pid,
                   win32::Handle result_read, Clock::time_point started)
    : name_(std::move(name)),
      process_(std::move(process)),
      pid_(pid),
      started_(started),
      result_(std::move(result_read)) {}

Worker::Impl::~Impl() {
  if (ended_) return;
  ::TerminateProcess(process_.get(), kTerminatedExitCode);
  ::WaitForSingleObject(process_.get(), INFINITE);
}

std::optional<WorkerOutcome> Worker::Impl::join(std::chrono::milliseconds timeout) {
  if (outcome_) return outcome_;
  if (!wait_for_end(Clock::now() + timeout)) return std::nullopt;
  return finish();
}

WorkerOutcome Worker::Impl::terminate(std::chrono::milliseconds) {
  if (outcome_) return *outcome_;
  if (!wait_for_end(Clock::now())) {
    terminated_ = ::TerminateProcess(process_.get(), kTerminatedExitCode) != 0;
    wait_for_end(std::nullopt);
  }
  return finish();
}

std::vector<std::size_t> Worker::Impl::wait_any(const std::vector<Impl*>& impls,
                                                std::chrono::milliseconds timeout) {
  // Beyond a year is forever, as on POSIX; it also keeps now() + timeout from overflowing.
  if (timeout > std::chrono::hours(24 * 365)) return wait_any_until(impls, std::nullopt);
  return wait_any_until(impls, Clock::now() + std::max(timeout, std::chrono::milliseconds(0)));
}

bool Worker::Impl::wait_for_end(std::optional<Clock::time_point> deadline) {
  return !wait_any_until({this}, deadline).empty();
}

std::vector<std::size_t> Worker::Impl::wait_any_until(const std::vector<Impl*>& impls,
                                                      std::optional<Clock::time_point> deadline) {
  DWORD slice_ms = 1;
  std::vector<HANDLE> handles;
  for (;;) {
    std::vector<std::size_t> ended;
    bool drained = false;
    handles.clear();
    for (std::size_t i = 0; i < impls.size(); ++i) {
      Impl& w = *impls[i];
      drained = w.drain_result() || drained;
      if (w.ended_now()) {
        ended.push_back(i);
      } else if (handles.size() < MAXIMUM_WAIT_OBJECTS) {
        handles.push_back(w.process_.get());
      }
    }
    if (!ended.empty()) return ended;
    if (deadline && Clock::now() >= *deadline) return ended;
    // A worker writing its result is served again at once; otherwise the slices grow, since
    // the pipes must be looked at now and then however long the wait.
    slice_ms = drained ? 1 : slice_ms;
    DWORD wait = slice_ms;
    if (deadline) {
      const auto left =
          std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      wait = static_cast<DWORD>(std::clamp<long long>(left, 0, slice_ms));
    }
    // WaitForMultipleObjects takes at most 64 handles: beyond them, workers are looked at only
    // between slices (ended_now above), within 50 ms of their end.
    ::WaitForMultipleObjects(static_cast<DWORD>(handles.size()), handles.data(), FALSE, wait);
    slice_ms = std::min<DWORD>(slice_ms * 2, 50);
  }
}

bool Worker::Impl::ended_now() {
  if (ended_) return true;
  if (::WaitForSingleObject(process_.get(), 0) != WAIT_OBJECT_0) return false;
  ended_ = true;
  ended_at_ = Clock::now();
  ::GetExitCodeProcess(process_.get(), &exit_code_);
  // Everything the worker wrote is in the pipe by now; don't wait for EOF.
  drain_result();
  return true;
}

bool Worker::Impl::drain_result() {
  bool got = false;
  while (result_) {
    DWORD available = 0;
    if (!::PeekNamedPipe(result_.get(), nullptr, 0, nullptr, &available, nullptr)) {
      result_.reset();  // broken pipe: every writer is gone and nothing is left
      break;
    }
    if (available == 0) break;
    std::string chunk(available, '\0');
    DWORD n = 0;
    if (!::ReadFile(result_.get(), chunk.data(), available, &n, nullptr)) {
      result_.reset();
      break;
    }
    result_text_.append(chunk.data(), n);
    got = got || n > 0;
  }
  return got;
}

const WorkerOutcome& Worker::Impl::finish() {
  WorkerOutcome o;
  o.seconds = std::chrono::duration<double>(ended_at_ - started_).count();
  bool have_ok = false, have_error = false;
  json doc = json::parse(result_text_, nullptr, /*allow_exceptions=*/false);
  if (doc.is_object() && doc.contains("ok")) {
    have_ok = true;
    o.result = std::move(doc["ok"]);
  } else if (doc.is_object() && doc.contains("error") && doc["error"].is_string()) {
    have_error = true;
    o.error = doc["error"].get<std::string>();
  }

  o.exit_code = static_cast<int>(exit_code_);
  if (terminated_ && exit_code_ == kTerminatedExitCode) {
    o.status = WorkerOutcome::Status::kCrash;
    o.exit_code = -1;
    o.signal = SIGTERM;
    o.error = "terminated (TerminateProcess: Windows has no SIGTERM)";
  } else if (is_exception_code(exit_code_)) {
    o.status = WorkerOutcome::Status::kCrash;
    o.error = "crashed with exception code " + hex(exit_code_);
  } else if (have_error) {
    o.status = WorkerOutcome::Status::kError;
  } else if (have_ok && exit_code_ == 0) {
    o.status = WorkerOutcome::Status::kOk;
  } else {
    o.status = WorkerOutcome::Status::kError;
    o.error = "worker exited with status " + std::to_string(o.exit_code) +
              (have_ok ? " after returning a result" : " without a result");
  }
  outcome_ = std::move(o);
  result_text_.clear();
  result_text_.shrink_to_fit();
  return *outcome_;
}

}  // namespace fc::launch
