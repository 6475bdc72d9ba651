// The rules by which forkcheck asks a live Python process for its stacks
// (harness/supervise/python_stacks_ask.h), on looks written here: which thread is asked, when,
// and when not at all. No process.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/supervise/python_stacks_ask.h"

namespace fc::harness {
namespace {

using Ask = PythonStacksAsk;
using Kind = Ask::Act::Kind;
using std::chrono::milliseconds;

const Ask::Clock::time_point kT0 = Ask::Clock::time_point() + std::chrono::seconds(100);

const int kStillMs = static_cast<int>(Ask::kStill.count());

// A process with a main thread 10 and Python threads 11 and 12, catching both signals, all asleep.
struct World {
  Ask::Offer offer;
  Ask::Look look;
  World() {
    offer.main_tid = 10;
    offer.python_tids = {11, 12};
    offer.stacks_signal = offer.thread_signal = true;
    look.now = kT0;
    look.catches_stacks = look.catches_thread = true;
    for (int tid : {10, 11, 12}) look.threads[tid].state = 'S';
  }
  void at(int ms) { look.now = kT0 + milliseconds(ms); }
  // The thread woke (and is asleep again): the kernel counted a context switch.
  void woke(int tid) { look.threads[tid].switches += 1; }
  // The program handles the stacks signal itself: only the thread signal is ours to send.
  void threads_only() { offer.stacks_signal = false; }
  // A process with its main thread alone.
  void main_only() {
    offer.python_tids = {};
    look.threads.erase(11);
    look.threads.erase(12);
  }
  // The thread asked wrote `bytes` and went back to sleep.
  void wrote(int tid, std::size_t bytes) {
    look.dump_bytes += bytes;
    look.dump_last = look.now;
    look.threads[tid].state = 'S';
    look.threads[tid].ours_pending = false;
  }
};

// Steps, acting on each act as sent (the signal then pending for its thread, as the kernel
// shows it until the thread takes it); the acts in order.
std::vector<Ask::Act> run_step(Ask& ask, World& w) {
  std::vector<Ask::Act> acts;
  for (int i = 0; i < 8; ++i) {
    const Ask::Act act = ask.step(w.look);
    if (act.kind == Kind::kNothing) break;
    ask.sent(act, Ask::Sent::kSent, w.look);
    w.look.threads[act.tid].ours_pending = true;
    acts.push_back(act);
  }
  return acts;
}

// Steps every 5 ms for up to 3 s, or until the ask is done, each thread asked on its own writing
// 10 bytes and going back to sleep, a main thread asked for all handling the signal and never
// answering (asleep in a lock); how many times `tid` was signalled.
int ask_to_the_end(Ask& ask, World& w, int tid) {
  int sent = 0;
  for (int ms = 0; !ask.done() && ms < 3000; ms += 5) {
    w.at(ms);
    for (const auto& act : run_step(ask, w)) {
      sent += act.tid == tid ? 1 : 0;
      if (act.kind == Kind::kAskThread) {
        w.wrote(act.tid, 10);
      } else {
        w.look.threads[act.tid].ours_pending = false;
        w.woke(act.tid);
      }
    }
  }
  return sent;
}

TEST(PythonStacksAsk, AsleepThreadsAreAskedOneAtATimeEachOnceTheLastDumpIsWhole) {
  World w;
  w.threads_only();
  Ask ask(w.offer, w.look);
  EXPECT_TRUE(run_step(ask, w).empty()) << "not asleep for long enough yet";
  w.at(kStillMs);
  auto acts = run_step(ask, w);
  ASSERT_EQ(acts.size(), 1u);  // the main thread, asleep: asked on its own
  EXPECT_EQ(acts[0].kind, Kind::kAskThread);
  EXPECT_EQ(acts[0].tid, 10);
  // Nothing written yet: the next thread waits.
  w.at(kStillMs + 1);
  EXPECT_TRUE(run_step(ask, w).empty());
  // Writing, still in its handler (running): its dump is not whole yet.
  w.look.dump_bytes = 40;
  w.look.dump_last = w.look.now;
  w.look.threads[10].state = 'R';
  w.at(kStillMs + 2);
  EXPECT_TRUE(run_step(ask, w).empty());
  w.wrote(10, 60);
  w.at(kStillMs + 3);
  acts = run_step(ask, w);
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].tid, 11);
  w.wrote(11, 50);
  w.at(kStillMs + 4);
  acts = run_step(ask, w);
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].tid, 12);
  w.wrote(12, 50);
  w.at(kStillMs + 5);
  EXPECT_TRUE(run_step(ask, w).empty());
  EXPECT_TRUE(ask.done());
  ASSERT_EQ(ask.thread_dumps().size(), 3u);
  EXPECT_EQ(ask.thread_dumps()[0].from, 0u);
  EXPECT_EQ(ask.thread_dumps()[0].to, 100u);
  EXPECT_EQ(ask.thread_dumps()[1].from, 100u);
  EXPECT_EQ(ask.thread_dumps()[2].to, 200u);
  EXPECT_TRUE(ask.not_read().empty());
}

TEST(PythonStacksAsk, ARunningMainThreadIsAskedForEveryThreadAndItsAnswerEndsTheAsk) {
  World w;
  w.look.threads[10].state = 'R';
  Ask ask(w.offer, w.look);
  auto acts = run_step(ask, w);
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].kind, Kind::kAskMain);
  w.at(1);
  w.look.stacks_answers = 1;
  EXPECT_TRUE(run_step(ask, w).empty());
  EXPECT_TRUE(ask.done());
  EXPECT_TRUE(ask.main_answered());
  EXPECT_TRUE(ask.not_read().empty());
}

TEST(PythonStacksAsk, AnAsleepMainThreadIsAskedForEveryThreadTooAndTheOthersWaitForItsAnswer) {
  // Safe at any instant: the C handler only notes the signal. Asleep in a lock it answers once
  // the lock is taken; meanwhile no thread is asked before it has been still for kStill.
  World w;
  Ask ask(w.offer, w.look);
  auto acts = run_step(ask, w);
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].kind, Kind::kAskMain);
  EXPECT_EQ(acts[0].tid, 10);
  w.look.threads[10].ours_pending = false;
  w.woke(10);
  w.at(kStillMs / 2);
  w.look.stacks_answers = 1;
  EXPECT_TRUE(run_step(ask, w).empty());
  EXPECT_TRUE(ask.done());
  EXPECT_TRUE(ask.main_answered());
  EXPECT_TRUE(ask.thread_dumps().empty()) << "no thread was signalled on its own";
}

TEST(PythonStacksAsk, AThreadSeenAsleepIsAskedOnItsOwnOnlyOnceAsleepForkStillWithoutAWake) {
  // Its own dump is safe only while it is parked in its wait: on 3.11 to 3.13 one interrupted
  // as a call returns to C crashes in faulthandler. Asleep at one look, it may run by the signal.
  World w;
  w.threads_only();
  w.offer.python_tids = {11};
  w.look.threads.erase(12);
  w.look.threads[10].state = 'R';
  Ask ask(w.offer, w.look);
  EXPECT_TRUE(run_step(ask, w).empty());
  w.at(kStillMs - 5);
  EXPECT_TRUE(run_step(ask, w).empty()) << "asleep, but not for long enough";
  w.woke(11);  // and asleep again: its stillness starts over at the look that sees it
  w.at(kStillMs);
  EXPECT_TRUE(run_step(ask, w).empty());
  w.at(2 * kStillMs - 1);
  EXPECT_TRUE(run_step(ask, w).empty());
  w.at(2 * kStillMs + static_cast<int>(Ask::kPassGap.count()));  // its next pass
  const auto acts = run_step(ask, w);
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].kind, Kind::kAskThread);
  EXPECT_EQ(acts[0].tid, 11);
}

TEST(PythonStacksAsk, AThreadThatKeepsWakingIsNeverAskedOnItsOwnAndSaidSo) {
  // As a thread waiting for the GIL in a busy program: asleep at every look, awake between.
  World w;
  w.threads_only();
  Ask ask(w.offer, w.look);
  int sent_12 = 0;
  for (int ms = 0; !ask.done() && ms < 3000; ms += 5) {
    w.at(ms);
    w.woke(12);
    for (const auto& act : run_step(ask, w)) {
      sent_12 += act.tid == 12 ? 1 : 0;
      w.wrote(act.tid, 10);
    }
  }
  EXPECT_EQ(sent_12, 0);
  EXPECT_TRUE(ask.done());
  EXPECT_EQ(ask.thread_dumps().size(), 2u);
  ASSERT_EQ(ask.not_read().size(), 1u);
  EXPECT_EQ(ask.not_read()[0].first, 12);
  EXPECT_NE(ask.not_read()[0].second.find("kept waking"), std::string::npos)
      << ask.not_read()[0].second;
}

TEST(PythonStacksAsk, AThreadFoundAwakeJustBeforeTheSignalIsAskedOnlyOnceStillAgain) {
  World w;
  w.threads_only();
  w.main_only();
  Ask ask(w.offer, w.look);
  w.at(kStillMs);
  auto act = ask.step(w.look);
  ASSERT_EQ(act.kind, Kind::kAskThread);
  ask.sent(act, Ask::Sent::kWoke, w.look);  // read again, it had woken: nothing went
  EXPECT_FALSE(ask.signalled());
  EXPECT_FALSE(ask.done());
  w.woke(10);
  w.at(kStillMs + static_cast<int>(Ask::kPassGap.count()));
  EXPECT_TRUE(run_step(ask, w).empty()) << "its stillness starts over";
  w.at(2 * kStillMs + static_cast<int>(Ask::kPassGap.count()) + 5);
  const auto acts = run_step(ask, w);
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].tid, 10);
}

TEST(PythonStacksAsk, ARunningThreadIsAskedOnALaterPassOnceItHasSleptForkStill) {
  World w;
  w.threads_only();
  w.offer.python_tids = {11};
  w.look.threads.erase(12);
  w.look.threads[11].state = 'R';
  Ask ask(w.offer, w.look);
  w.at(kStillMs);
  auto acts = run_step(ask, w);
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].tid, 10);
  w.wrote(10, 10);
  w.at(kStillMs + 1);
  EXPECT_TRUE(run_step(ask, w).empty());  // 11 runs: not asked
  w.look.threads[11].state = 'S';
  w.woke(11);
  w.at(kStillMs + 1 + static_cast<int>(Ask::kPassGap.count()));
  EXPECT_TRUE(run_step(ask, w).empty()) << "asleep since this look only";
  w.at(2 * kStillMs + 1 + static_cast<int>(Ask::kPassGap.count()));
  acts = run_step(ask, w);
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].tid, 11);
}

TEST(PythonStacksAsk, AThreadThatRunsThroughoutIsNeverAskedAndSaidSo) {
  World w;
  w.look.threads[12].state = 'R';
  Ask ask(w.offer, w.look);
  EXPECT_EQ(ask_to_the_end(ask, w, 12), 0);
  EXPECT_TRUE(ask.done());
  ASSERT_EQ(ask.not_read().size(), 1u);
  EXPECT_EQ(ask.not_read()[0].first, 12);
  EXPECT_NE(ask.not_read()[0].second.find("running"), std::string::npos);
  EXPECT_EQ(ask.thread_dumps().size(), 2u);
}

TEST(PythonStacksAsk, AThreadInPauseIsNeverAskedSinceOurSignalWouldEndItsWait) {
  // signal.pause() returns after any caught signal: asking it would make the program go on.
  World w;
  w.look.threads[10].signal_ends_wait = true;
  Ask ask(w.offer, w.look);
  EXPECT_EQ(ask_to_the_end(ask, w, 10), 0);
  EXPECT_TRUE(ask.done());
  ASSERT_EQ(ask.not_read().size(), 1u);
  EXPECT_EQ(ask.not_read()[0].first, 10);
  EXPECT_NE(ask.not_read()[0].second.find("pause() or sigsuspend()"), std::string::npos);
  EXPECT_EQ(ask.thread_dumps().size(), 2u) << "the others are asked as ever";
}

TEST(PythonStacksAsk, NothingIsSentToAProcessThatDoesNotCatchTheSignal) {
  // An uncaught real-time signal kills: a process that dropped our handlers is never signalled.
  World w;
  w.look.catches_thread = false;
  w.look.catches_stacks = false;
  w.look.threads[10].state = 'R';
  Ask ask(w.offer, w.look);
  EXPECT_TRUE(run_step(ask, w).empty());
  EXPECT_TRUE(ask.done());
  EXPECT_FALSE(ask.signalled());
  ASSERT_FALSE(ask.not_read().empty());
  EXPECT_NE(ask.not_read()[0].second.find("does not catch"), std::string::npos);
}

TEST(PythonStacksAsk, AThreadWithOurSignalPendingIsNotSignalledAgain) {
  World w;
  w.main_only();
  w.look.threads[10].ours_pending = true;
  Ask ask(w.offer, w.look);
  EXPECT_TRUE(run_step(ask, w).empty());
  w.at(kStillMs);
  EXPECT_TRUE(run_step(ask, w).empty());
}

TEST(PythonStacksAsk, AThreadThatDoesNotAnswerStopsTheAskSinceItsDumpMayStillCome) {
  World w;
  w.threads_only();
  Ask ask(w.offer, w.look);
  w.at(kStillMs);
  auto acts = run_step(ask, w);
  ASSERT_EQ(acts.size(), 1u);
  w.look.threads[10].ours_pending = true;  // not delivered (held by a debugger, say)
  w.at(kStillMs + static_cast<int>(Ask::kThreadWait.count()));
  EXPECT_TRUE(run_step(ask, w).empty());
  EXPECT_TRUE(ask.done());
  ASSERT_EQ(ask.not_read().size(), 3u);
  EXPECT_NE(ask.not_read()[0].second.find("did not answer"), std::string::npos);
  EXPECT_NE(ask.not_read()[1].second.find("had not answered"), std::string::npos);
}

TEST(PythonStacksAsk, AThreadThatHandledTheSignalAndWroteNothingHasNoPythonFrame) {
  World w;
  w.threads_only();
  w.main_only();
  Ask ask(w.offer, w.look);
  w.at(kStillMs);
  ASSERT_EQ(run_step(ask, w).size(), 1u);
  w.at(kStillMs + 1);  // delivered and handled: asleep again, nothing written
  w.look.threads[10].ours_pending = false;
  EXPECT_TRUE(run_step(ask, w).empty());
  EXPECT_TRUE(ask.done());
  ASSERT_EQ(ask.not_read().size(), 1u);
  EXPECT_NE(ask.not_read()[0].second.find("no Python frame"), std::string::npos);
}

TEST(PythonStacksAsk, AProcessThatEndsEndsItsAsk) {
  World w;
  Ask ask(w.offer, w.look);
  ASSERT_EQ(run_step(ask, w).size(), 1u);
  w.look.gone = true;
  EXPECT_TRUE(run_step(ask, w).empty());
  EXPECT_TRUE(ask.done());
}

TEST(PythonStacksAsk, StoppedBeforeItsDumpCameTheThreadIsUnreadAndTheRestNotAsked) {
  World w;
  w.threads_only();
  Ask ask(w.offer, w.look);
  w.at(kStillMs);
  ASSERT_EQ(run_step(ask, w).size(), 1u);
  ask.stop(w.look);
  EXPECT_TRUE(ask.done());
  EXPECT_TRUE(ask.thread_dumps().empty());
  ASSERT_EQ(ask.not_read().size(), 3u);
  EXPECT_NE(ask.not_read()[0].second.find("had not come"), std::string::npos);
  EXPECT_NE(ask.not_read()[1].second.find("not asked yet"), std::string::npos);
}

}  // namespace
}  // namespace fc::harness
