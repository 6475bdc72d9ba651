// How forkcheck asks one live Python process for its stacks without ever risking it: no thread's
// frames are read by another thread while it may run, nor by itself at an instant it may be
// changing them. Two ways, both the program's own code:
//  - its main thread is sent the stacks signal first: a Python-level handler that takes every
//    thread's frames under the GIL between two bytecodes (sys._current_frames()) and answers
//    with a "stacks" event. Safe at any instant (the C handler only notes the signal), so it goes
//    whatever the thread does. Asleep, it answers at once only in time.sleep() or select(),
//    which Python resumes after the handler; in a lock, a join, a queue, a read or C code, only
//    once that returns (the handler has SA_RESTART, so the wait goes on), hence the other way:
//  - each Python thread seen asleep, with no wake, for kStill is sent the thread signal, one at a
//    time: faulthandler writes that thread's own frames (all_threads=False). Safe only while the
//    thread is parked in its wait: on 3.11 to 3.13 a thread interrupted as a call returns to C
//    has a frame chain faulthandler cannot walk, and dies of it (SIGSEGV in dump_frame; a busy
//    program died within hundreds of such signals sent to running threads on 3.13). A thread
//    seen asleep at one look may be running by the signal: one that stayed asleep for kStill
//    (no context switch, as the kernel counts them) is unlikely to wake in the microseconds
//    between the last look and the signal, which is the whole of the risk that remains. A thread
//    waiting for the GIL wakes every few milliseconds (the switch interval) and is never asked
//    this way: the main thread's answer has it. The next is asked only once the last one's dump
//    is whole, since all share one stream.
// A thread asleep in pause() or sigsuspend(), which any caught signal ends, is never asked: the
// program waits there for a signal, and ours would be it. A thread that runs or wakes whenever
// its turn comes is asked again on a later pass, and is left unread when the budget is spent
// (faulthandler's all-threads dump, which reads running threads' frames without the GIL, is never
// used: it can crash the program). A signal is sent only where the process catches it (an
// uncaught real-time signal kills) and none of ours is pending there.
// This class decides; the supervisor looks (/proc) and signals (python_stacks_ask_posix.cc).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace fc::harness {

class PythonStacksAsk {
 public:
  using Clock = std::chrono::steady_clock;

  // How long the main thread's answer may take (it comes at its next bytecode); how long a thread
  // asked on its own may take to start writing; how long a dump must be quiet to be whole when
  // its thread does not go back to sleep; the whole ask, every pass included.
  static constexpr auto kMainWait = std::chrono::milliseconds(500);
  static constexpr auto kThreadWait = std::chrono::milliseconds(300);
  static constexpr auto kQuiet = std::chrono::milliseconds(20);
  static constexpr auto kBudget = std::chrono::milliseconds(1500);
  // How long a thread must be seen asleep, without one wake, before it is sent the thread signal.
  // 50 ms: longer than a GIL waiter's switch interval (5 ms), shorter than a 0.1 s sleep loop
  // (3.6's Pool worker handler), which is asked in the second half of its sleep.
  static constexpr auto kStill = std::chrono::milliseconds(50);
  // Between two passes over the threads that were running.
  static constexpr auto kPassGap = std::chrono::milliseconds(10);
  // How often the supervisor looks at a process being asked, and how many acts it lets one ask
  // do in one of its rounds (the rest wait for the next: other jobs are served meanwhile).
  static constexpr auto kLookEvery = std::chrono::milliseconds(5);
  static constexpr int kActsPerRound = 16;

  // What the process offered when it said hello.
  struct Offer {
    int main_tid = 0;              // its main thread's OS id (a fork child's: the forking thread)
    std::vector<int> python_tids;  // OS ids of its Python threads that it told (main included)
    bool stacks_signal = false;    // it handles the stacks signal
    bool thread_signal = false;    // it registered the thread signal
  };
  struct ThreadLook {
    char state = '?';           // the kernel's: R running, S asleep, D disk, t/T stopped...
    bool ours_pending = false;  // a signal of ours is still pending for it
    // It sleeps in pause() or sigsuspend(): a signal of ours would end that wait (the program's
    // signal.pause() would return), so it is never asked.
    bool signal_ends_wait = false;
    // Its context switches so far (voluntary and not): one more each time it went to sleep or
    // was preempted, so the same count at two looks, asleep at both, means it never woke between.
    std::uint64_t switches = 0;
  };
  // What the supervisor sees now.
  struct Look {
    Clock::time_point now;
    bool gone = false;                  // the process ended (or is a zombie)
    bool catches_stacks = false;        // the kernel says it catches the stacks signal
    bool catches_thread = false;        // ... and the thread signal
    std::map<int, ThreadLook> threads;  // its live threads, by OS id
    std::size_t stacks_answers = 0;     // "stacks" events it sent so far
    std::size_t dump_bytes = 0;         // bytes on its dumps stream so far
    Clock::time_point dump_last{};      // when the last of them came
  };
  struct Act {
    enum class Kind { kNothing, kAskMain, kAskThread } kind = Kind::kNothing;
    int tid = 0;
  };
  // What came of an act: the signal went, could not go, or was held back since the thread had
  // woken (or run) by the time it was looked at again, just before the signal.
  enum class Sent { kSent, kFailed, kWoke };
  // A thread's own dump: its OS id and where it lies in the dumps stream.
  struct ThreadDump {
    int tid = 0;
    std::size_t from = 0, to = 0;
  };

  PythonStacksAsk(Offer offer, const Look& first);

  // What to do now, given a fresh look; the caller does it and says what came of it.
  Act step(const Look& look);
  void sent(const Act& act, Sent how, const Look& look);
  bool done() const { return done_; }
  // Ends it now (the stacks are due): a dump still being written is not read.
  void stop(const Look& look);
  const Offer& offer() const { return offer_; }

  // The main thread's answer came (the caller takes the "stacks" event it counted).
  bool main_answered() const { return main_answered_; }
  const std::vector<ThreadDump>& thread_dumps() const { return dumps_; }
  // Threads whose stacks were not read, each with why ("running whenever it was its turn").
  const std::vector<std::pair<int, std::string>>& not_read() const { return not_read_; }
  // Whether any signal went to the process.
  bool signalled() const { return signalled_; }

 private:
  void finish_current(const Look& look);
  void finish(const Look& look);
  // Notes which threads stayed asleep since the last look, and since when.
  void watch(const Look& look);
  // Asleep now, with no wake for kStill or longer.
  bool still(int tid, const Look& look) const;

  struct Stillness {
    std::uint64_t switches = 0;
    bool asleep = false;
    Clock::time_point since{};  // when it was first seen asleep with these switches
  };
  std::map<int, Stillness> still_;

  Offer offer_;
  Clock::time_point start_;
  std::size_t answers_before_ = 0;
  bool main_tried_ = false, main_asked_ = false, main_answered_ = false, main_given_up_ = false;
  std::deque<int> queue_;     // threads to ask on this pass, in order (main first)
  std::vector<int> running_;  // asked on a later pass: they were running at their turn
  Clock::time_point next_pass_{};
  int current_ = 0;  // the thread whose dump is being written
  std::size_t current_from_ = 0;
  Clock::time_point current_sent_{};
  bool stream_unsure_ = false;  // a thread asked did not answer: its dump may still come
  std::vector<ThreadDump> dumps_;
  std::vector<std::pair<int, std::string>> not_read_;
  bool done_ = false;
  bool stopped_ = false;  // ended by stop(), before its budget was spent
  bool signalled_ = false;
};

}  // namespace fc::harness
