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
  if (first.gone) done_ = true;
}

PythonStacksAsk::Act PythonStacksAsk::step(const Look& look) {
  if (done_) return {};
  if (look.gone) {
    current_ = 0;
    queue_.clear();
    running_.clear();
    done_ = true;
    return {};
  }
  if (main_asked_ && look.stacks_answers > answers_before_) main_answered_ = true;
  if (main_asked_ && !main_answered_ && look.now - start_ >= kMainWait) main_given_up_ = true;
  // The main thread first, when it runs Python (or C code that returns to it): one answer for
  // every thread. Asleep, it would answer only once it woke (the signal interrupts no wait).
  if (!main_asked_ && !main_tried_) {
    main_tried_ = true;
    auto m = look.threads.find(offer_.main_tid);
    if (offer_.stacks_signal && look.catches_stacks && m != look.threads.end() &&
        m->second.state == 'R' && !m->second.ours_pending)
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
      if (t->second.state == 'S' && !t->second.ours_pending) return {Act::Kind::kAskThread, tid};
      running_.push_back(tid);  // running (or stopped, or asleep in the disk): a later pass
      next_pass_ = look.now + kPassGap;
    }
    if (!running_.empty()) return {};
  }
  if (main_asked_ && !main_answered_ && !main_given_up_) return {};
  finish(look);
  return {};
}

void PythonStacksAsk::sent(const Act& act, bool ok, const Look& look) {
  if (act.kind == Act::Kind::kNothing) return;
  signalled_ = signalled_ || ok;
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
