#include "harness/supervise/python_stacks_ask.h"

#include <set>

#include "reports/text.h"

namespace fc::harness {
namespace {

// After its dump, a thread asleep again is out of the handler: its dump is whole once the stream
// has been read (the supervisor drains it after looking at the thread).
bool back_asleep(const PythonStacksAsk::ThreadLook& t) { return t.state == 'S' && !t.ours_pending; }

std::string waited(std::chrono::milliseconds d) {
  return reports::format_tenths(std::chrono::duration<double>(d).count());
}

}  // namespace

PythonStacksAsk::PythonStacksAsk(Offer offer, const Look& first)
    : offer_(std::move(offer)), start_(first.now), answers_before_(first.stacks_answers) {
  std::set<int> seen;
  auto add = [&](int tid) {
    if (tid > 0 && seen.insert(tid).second) queue_.push_back(tid);
  };
  add(offer_.main_tid);
  for (int tid : offer_.python_tids) add(tid);
  watch(first);
  if (first.gone) done_ = true;
}

void PythonStacksAsk::watch(const Look& look) {
  for (const auto& [tid, t] : look.threads) {
    auto [s, fresh] = still_.try_emplace(tid);
    const bool asleep = t.state == 'S';
    if (fresh || !asleep || !s->second.asleep || t.switches != s->second.switches)
      s->second = {t.switches, asleep, look.now};
  }
}

bool PythonStacksAsk::still(int tid, const Look& look) const {
  const auto s = still_.find(tid);
  return s != still_.end() && s->second.asleep && look.now - s->second.since >= kStill;
}

PythonStacksAsk::Act PythonStacksAsk::step(const Look& look) {
  if (done_) return {};
  watch(look);
  if (look.gone) {
    current_ = 0;
    queue_.clear();
    running_.clear();
    done_ = true;
    return {};
  }
  if (main_asked_ && look.stacks_answers > answers_before_) main_answered_ = true;
  if (main_asked_ && !main_answered_ && look.now - start_ >= kMainWait) main_given_up_ = true;
  // The main thread first, whatever it does (but wait for a signal): one answer for every
  // thread, at its next bytecode, which may be at once or only once its wait returns.
  if (!main_asked_ && !main_tried_) {
    main_tried_ = true;
    auto m = look.threads.find(offer_.main_tid);
    if (offer_.stacks_signal && look.catches_stacks && m != look.threads.end() &&
        !m->second.ours_pending && !(m->second.state == 'S' && m->second.signal_ends_wait))
      return {Act::Kind::kAskMain, offer_.main_tid};
  }
  if (current_ != 0) {
    finish_current(look);
    if (current_ != 0) return {};
  }
  if (main_answered_) {
    finish(look);
    return {};
  }
  const bool in_budget = look.now - start_ < kBudget;
  if (!stream_unsure_ && in_budget && offer_.thread_signal && look.catches_thread) {
    if (queue_.empty() && !running_.empty() && look.now >= next_pass_) {
      queue_.assign(running_.begin(), running_.end());
      running_.clear();
    }
    while (!queue_.empty()) {
      const int tid = queue_.front();
      queue_.pop_front();
      auto t = look.threads.find(tid);
      if (t == look.threads.end()) continue;  // it ended meanwhile
      if (t->second.state == 'S' && t->second.signal_ends_wait) {
        not_read_.emplace_back(tid,
                               "not asked: it waits in pause() or sigsuspend(), which any signal "
                               "would end");
        continue;
      }
      if (t->second.state == 'S' && !t->second.ours_pending && still(tid, look))
        return {Act::Kind::kAskThread, tid};
      // Running, or waking (or stopped, or asleep in the disk): a later pass.
      running_.push_back(tid);
      next_pass_ = look.now + kPassGap;
    }
    if (!running_.empty()) return {};
  }
  if (main_asked_ && !main_answered_ && !main_given_up_) return {};
  finish(look);
  return {};
}

void PythonStacksAsk::sent(const Act& act, Sent how, const Look& look) {
  if (act.kind == Act::Kind::kNothing) return;
  const bool ok = how == Sent::kSent;
  signalled_ = signalled_ || ok;
  if (how == Sent::kWoke) {
    // Not still after all: its stillness starts over, and it waits for a later pass.
    still_.erase(act.tid);
    if (act.kind == Act::Kind::kAskThread) {
      running_.push_back(act.tid);
      next_pass_ = look.now + kPassGap;
    }
    return;
  }
  if (act.kind == Act::Kind::kAskMain) {
    main_asked_ = ok;
    return;
  }
  if (!ok) {
    not_read_.emplace_back(act.tid, "forkcheck's signal could not be sent to it");
    return;
  }
  current_ = act.tid;
  current_from_ = look.dump_bytes;
  current_sent_ = look.now;
}

void PythonStacksAsk::stop(const Look& look) {
  if (done_) return;
  if (main_asked_ && look.stacks_answers > answers_before_) main_answered_ = true;
  if (current_ != 0) {
    not_read_.emplace_back(current_, "its dump had not come when the stacks were due");
    current_ = 0;
  }
  stopped_ = true;
  finish(look);
}

void PythonStacksAsk::finish_current(const Look& look) {
  const std::size_t bytes = look.dump_bytes > current_from_ ? look.dump_bytes - current_from_ : 0;
  auto t = look.threads.find(current_);
  const bool ended = t == look.threads.end();
  if (bytes > 0 && (ended || back_asleep(t->second) || look.now - look.dump_last >= kQuiet)) {
    dumps_.push_back({current_, current_from_, look.dump_bytes});
    current_ = 0;
    return;
  }
  if (bytes > 0) return;  // still writing
  if (ended) {
    not_read_.emplace_back(current_, "it ended before it answered");
  } else if (back_asleep(t->second) && look.now > current_sent_) {
    // The signal was taken and handled, and nothing written: no Python frame to tell.
    not_read_.emplace_back(current_, "it has no Python frame (not running Python code)");
  } else if (look.now - current_sent_ >= kThreadWait) {
    not_read_.emplace_back(current_, "it did not answer within " + waited(kThreadWait));
    stream_unsure_ = true;  // its dump may still come, into what another thread would write
  } else {
    return;
  }
  current_ = 0;
}

void PythonStacksAsk::finish(const Look& look) {
  done_ = true;
  if (main_answered_) {
    not_read_.clear();  // the answer has every thread
    return;
  }
  running_.insert(running_.end(), queue_.begin(), queue_.end());
  queue_.clear();
  for (int tid : running_) {
    auto t = look.threads.find(tid);
    if (t == look.threads.end()) continue;
    std::string why;
    if (!offer_.thread_signal || !look.catches_thread)
      why = "it does not catch forkcheck's thread signal";
    else if (stream_unsure_)
      why = "not asked: a thread asked before it had not answered";
    else if (stopped_ && t->second.state == 'S')
      why = "not asked yet when the stacks were due";
    else if (t->second.state == 'S')
      why =
          "it kept waking (as a thread waiting for the GIL does) whenever its turn came: a thread "
          "is asked for its own stack only once asleep for " +
          std::to_string(kStill.count()) +
          " ms without a wake (one that wakes as the signal lands can crash)";
    else if (t->second.state == 'R')
      why =
          "it was running Python whenever its turn came (a running thread's frames are not "
          "read: that could crash the program)";
    else
      why = std::string("it was in state ") + t->second.state + " whenever its turn came";
    not_read_.emplace_back(tid, why);
  }
  running_.clear();
}

}  // namespace fc::harness
