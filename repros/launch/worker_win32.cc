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
    : name_(std::move(name)), process_(std::move(process)), pid_(pid), started_(started),
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

bool Worker::Impl::wait_for_end(std::optional<Clock::time_point> deadline) {
  DWORD slice_ms = 1;
  for (;;) {
    drain_result();
    if (ended_) return true;
    DWORD wait = slice_ms;
    if (deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now());
      wait = static_cast<DWORD>(std::clamp<long long>(left.count(), 0, slice_ms));
    }
    if (::WaitForSingleObject(process_.get(), wait) == WAIT_OBJECT_0) {
      ended_ = true;
      ended_at_ = Clock::now();
      ::GetExitCodeProcess(process_.get(), &exit_code_);
      // Everything the worker wrote is in the pipe by now; don't wait for EOF.
      drain_result();
      return true;
    }
    if (deadline && Clock::now() >= *deadline) return false;
    slice_ms = std::min<DWORD>(slice_ms * 2, 50);
  }
}

void Worker::Impl::drain_result() {
  while (result_) {
    DWORD available = 0;
    if (!::PeekNamedPipe(result_.get(), nullptr, 0, nullptr, &available, nullptr)) {
      result_.reset();  // broken pipe: every writer is gone and nothing is left
      return;
    }
    if (available == 0) return;
    std::string chunk(available, '\0');
    DWORD n = 0;
    if (!::ReadFile(result_.get(), chunk.data(), available, &n, nullptr)) {
      result_.reset();
      return;
    }
    result_text_.append(chunk.data(), n);
  }
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
