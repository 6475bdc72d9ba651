// This process on POSIX systems (Linux and macOS alike): ids, signal names, fork handlers,
// memory fork children share. See process.h.
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "launch/process.h"

namespace fc::launch {
namespace {

struct SignalName {
  int sig;
  const char* abbrev;
};

// Every signal both Linux and macOS have, then the ones only one of them has.
const SignalName kSignals[] = {
    {SIGHUP, "HUP"},       {SIGINT, "INT"},   {SIGQUIT, "QUIT"},   {SIGILL, "ILL"},
    {SIGTRAP, "TRAP"},     {SIGABRT, "ABRT"}, {SIGBUS, "BUS"},     {SIGFPE, "FPE"},
    {SIGKILL, "KILL"},     {SIGUSR1, "USR1"}, {SIGSEGV, "SEGV"},   {SIGUSR2, "USR2"},
    {SIGPIPE, "PIPE"},     {SIGALRM, "ALRM"}, {SIGTERM, "TERM"},   {SIGCHLD, "CHLD"},
    {SIGCONT, "CONT"},     {SIGSTOP, "STOP"}, {SIGTSTP, "TSTP"},   {SIGTTIN, "TTIN"},
    {SIGTTOU, "TTOU"},     {SIGURG, "URG"},   {SIGXCPU, "XCPU"},   {SIGXFSZ, "XFSZ"},
    {SIGVTALRM, "VTALRM"}, {SIGPROF, "PROF"}, {SIGWINCH, "WINCH"}, {SIGIO, "IO"},
    {SIGSYS, "SYS"},
#ifdef SIGSTKFLT
    {SIGSTKFLT, "STKFLT"},
#endif
#ifdef SIGPWR
    {SIGPWR, "PWR"},
#endif
#ifdef SIGEMT
    {SIGEMT, "EMT"},
#endif
#ifdef SIGINFO
    {SIGINFO, "INFO"},
#endif
};

}  // namespace

const char* unavailable_reason(StartMethod) { return nullptr; }

ProcessId current_process_id() { return static_cast<ProcessId>(::getpid()); }

std::string signal_abbrev(int sig) {
  for (const auto& s : kSignals)
    if (s.sig == sig) return s.abbrev;
  return std::to_string(sig);
}

std::string signal_description(int sig) {
  const char* text = ::strsignal(sig);
  return text != nullptr ? text : "signal " + std::to_string(sig);
}

void at_fork(void (*prepare)(), void (*parent)(), void (*child)()) {
  if (const int rc = ::pthread_atfork(prepare, parent, child); rc != 0)
    throw std::system_error(rc, std::generic_category(), "pthread_atfork");
}

void* map_fork_shared(std::size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANON, -1, 0);
  if (p == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "mmap");
  return p;
}

void unmap_fork_shared(void* p, std::size_t bytes) {
  if (p != nullptr) ::munmap(p, bytes);
}

void inherit_in_spawned_workers(std::uintptr_t) {}

}  // namespace fc::launch
