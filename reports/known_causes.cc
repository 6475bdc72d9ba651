#include "reports/known_causes.h"

#include <cstdlib>

#include "reports/python_view.h"
#include "reports/report_view.h"
#include "reports/text.h"

namespace fc::reports {

namespace {

using json = nlohmann::json;

// Whether a thread's Python frames pass through `function` of multiprocessing's `file`
// ("multiprocessing/process.py").
bool passes(const Thread& thread, const char* file, const char* function) {
  for (const PythonFrame& f : thread.python)
    if (f.function == function && ends_with(f.file, file)) return true;
  return false;
}

// A thread's line in the user's own files ("train.py:18 in main"), "" when it has none.
std::string users_line(const Thread& thread) {
  const std::string line = python_where(thread);
  return line.empty() || line[0] == '/' ? "" : line;
}

// The variant's wait chain, or an empty one (not read: read == false) where it has none.
const WaitChain& chain_of(const Variant& v) {
  static const WaitChain kNone;
  return v.wait_chain ? *v.wait_chain : kNone;
}

bool stopped(const Variant& v) {
  const std::string o = v.outcome;
  return o == "hang" || o == "timeout";
}

std::pair<std::string, std::string> pool_waiter(const Variant& v);
const PythonProcess* python_process(const Variant& v, const std::string& pid);

// "_pickle.PicklingError" -> "PicklingError".
std::string last_name(const std::string& dotted) { return dotted.substr(dotted.rfind('.') + 1); }

KnownCause made(const char* rule) {
  for (const auto& r : cause_rules())
    if (std::string(r.id) == rule) return {r.id, r.source, "", "", ""};
  return {rule, "", "", "", ""};
}

// The docs' "Joining processes that use queues": a process joined before what it put on a queue
// was taken. The join (process.py join) in one process, the feeder thread (queues.py _feed)
// blocked writing in the process joined, and the wait chain to say that the one joins the other
// and that the pipe's only readers are those two.
std::optional<KnownCause> queue_joined_before_drained(const Variant& v) {
  if (!stopped(v)) return std::nullopt;
  const WaitChain& chain = chain_of(v);
  for (const auto& joiner : v.stacks) {
    if (!passes(joiner, "multiprocessing/process.py", "join")) continue;
    const std::string a = std::to_string(joiner.pid);
    const std::string line = users_line(joiner);
    // The child it joins, from the chain; without a chain (not Linux), not known.
    std::string joined;
    for (const WaitLink& l : chain.links)
      if (l.pid == joiner.pid && l.tid == joiner.tid && l.on == "child" && l.child)
        joined = std::to_string(*l.child);
    for (const auto& feeder : v.stacks) {
      if (feeder.pid == joiner.pid || !passes(feeder, "multiprocessing/queues.py", "_feed") ||
          feeder.syscall != "write" || (!joined.empty() && std::to_string(feeder.pid) != joined))
        continue;
      const std::string b = std::to_string(feeder.pid);
      KnownCause c = made("queue-joined-before-drained");
      if (joined.empty()) {
        if (chain.read) return std::nullopt;  // it joins some other process
        c.cause = "pid " + a + " waits in join()" + (line.empty() ? "" : " (" + line + ")") +
                  " while pid " + b +
                  "'s queue feeder thread waits to write what it put on a multiprocessing.Queue "
                  "into the queue's pipe";
        c.missing = "which process join() waits for, and who reads the pipe (read on Linux only)";
        return c;
      }
      // The feeder's pipe: read by no process but those two.
      bool only_them = false;
      for (const WaitLink& l : chain.links) {
        if (l.pid != feeder.pid || l.tid != feeder.tid) continue;
        only_them = l.files.size() == 1;
        for (const WaitFile& f : l.files)
          for (const FileHolder& h : f.holders)
            if (h.reads && h.pid != joiner.pid && h.pid != feeder.pid) only_them = false;
      }
      c.cause = "pid " + a + " joins pid " + b + (line.empty() ? "" : " (" + line + ")") +
                " before taking what pid " + b +
                " put on a multiprocessing.Queue: a process ends only once its queue's feeder "
                "thread has written all it put into the queue's pipe, and that pipe stays full "
                "until a process reads it";
      if (!only_them) {
        c.missing = "that the pipe's only readers are pids " + a + " and " + b;
        return c;
      }
      c.fix = (line.empty() ? std::string("") : "at " + line + ", ") +
              "take the items off the queue (q.get()) before joining the process that put them "
              "there, and join it after: a process that has put items on a queue ends only once "
              "they are in the pipe";
      return c;
    }
  }
  return std::nullopt;
}

// The feeder thread could not pickle what was put: Queue.put() does not raise, the feeder prints
// the error and drops the object, and a get() waits for ever for it.
std::optional<KnownCause> queue_put_unpicklable(const Variant& v) {
  if (!stopped(v)) return std::nullopt;
  const auto error = traceback_in(v.stderr_text);
  if (!error) return std::nullopt;
  bool feeder = false;
  for (const auto& f : error->frames)
    feeder = feeder || (f.function == "_feed" && ends_with(f.file, "multiprocessing/queues.py"));
  if (!feeder) return std::nullopt;
  KnownCause c = made("queue-put-unpicklable");
  const std::string type = last_name(error->type);
  const std::string what = type + ": " + shorten(error->message, 160);
  std::string waiter;
  for (const auto& t : v.stacks)
    if (passes(t, "multiprocessing/queues.py", "get") && !users_line(t).empty()) {
      waiter = "pid " + std::to_string(t.pid) + "'s get() at " + users_line(t);
      break;
    }
  // No get() waiting: the error is real, but it is not why the program stopped.
  if (waiter.empty()) return std::nullopt;
  c.cause = "an object put on a multiprocessing.Queue could not be pickled (" + what +
            "): put() does not raise; the queue's feeder thread pickles in the background, printed "
            "that error and dropped the object, so " +
            waiter + " waits for ever (if it waits for that object: the put is not seen)";
  c.missing = "that the get() waits on the queue the object was put on (the put is not seen)";
  c.fix = "put on the queue only what pickle can send (" + what +
          "): a module-level function rather than a lambda or a nested one, plain data rather "
          "than a lock, a file or a connection";
  return c;
}

bool pool_worker(const std::string& what) {
  for (const char* kind : {"ForkPoolWorker", "SpawnPoolWorker", "ForkServerPoolWorker"})
    if (what.rfind(kind, 0) == 0) return true;
  return false;
}

// Whether process `pid` told that it ended inside multiprocessing.pool's worker loop (its
// exception's or exit call's frames pass through pool.py's worker): 1; that it ended elsewhere:
// 0; nothing told: -1.
int ended_in_pool_task(const Variant& v, int pid) {
  const PythonProcess* p = python_process(v, std::to_string(pid));
  if (!p) return -1;
  for (const auto& x : p->exceptions) {
    if (x.where != "process" && x.where != "exit" && x.where != "main") continue;
    for (const auto& f : x.frames)
      if (f.function == "worker" && ends_with(f.file, "multiprocessing/pool.py")) return 1;
    return 0;
  }
  return -1;
}

bool exited(const DescendantEnd& d) { return d.how.find("exit status") != std::string::npos; }

// A Pool worker that ended mid-task (sys.exit, os._exit, a signal): the Pool starts another in its
// place and never learns the task was lost; the caller waits for its result for ever. The dead
// worker must be a child of the waiting process, and that process must have one Pool alive (its
// worker-handler threads counted): with two, which Pool lost the task is not known.
std::optional<KnownCause> pool_worker_ended(const Variant& v) {
  if (!stopped(v)) return std::nullopt;
  const auto [waiter, waiter_pid] = pool_waiter(v);
  if (waiter.empty()) return std::nullopt;
  size_t pools = 0;
  for (const auto& t : v.stacks)
    pools += std::to_string(t.pid) == waiter_pid &&
             passes(t, "multiprocessing/pool.py", "_handle_workers");
  const PythonProcess* parent = python_process(v, waiter_pid);
  for (const auto& d : ended_badly(v)) {
    if (!pool_worker(d.what)) continue;
    bool its_child = false;
    if (parent)
      for (const auto& e : parent->child_exits) its_child = its_child || e.pid == d.pid;
    if (!its_child) continue;
    // How it ended, where told: inside the Pool's worker loop (a task), or elsewhere (at start:
    // a spawned worker that failed to import the main module is not this shape).
    const int in_task = ended_in_pool_task(v, d.pid);
    if (in_task == 0) continue;
    KnownCause c = made("pool-worker-ended-mid-task");
    c.cause = "pid " + std::to_string(d.pid) + " " + d.what + " " + d.how +
              (d.where.empty() ? "" : " at " + d.where) +
              " while it ran a task: multiprocessing.Pool starts a new worker in its place but "
              "never learns that the task was lost, so " +
              waiter + " waits for its result for ever";
    if (pools != 1) {
      // Counted in the stacks read: none seen may be a thread whose stack was not read.
      c.missing =
          "which Pool pid " + std::to_string(d.pid) + " worked for: " +
          (pools == 0 ? "no thread of pid " + waiter_pid +
                            " read in a Pool's worker handler (_handle_workers)"
                      : "pid " + waiter_pid + " has " + std::to_string(pools) + " Pools alive");
      return c;
    }
    if (in_task < 0 && exited(d)) {
      // Nothing of its end was told (a bootstrap that did not see it): that it was in a task is
      // the hang's likeliest reading, not a seen fact.
      c.cause = "pid " + std::to_string(d.pid) + " " + d.what + " " + d.how +
                ", and multiprocessing.Pool never learns of a task lost so: " + waiter +
                " waits for a result for ever";
      c.missing = "whether pid " + std::to_string(d.pid) +
                  " was running a task, and where it ended (nothing of its end was told)";
      return c;
    }
    if (exited(d)) {
      c.fix = std::string(d.where.empty() ? "in the task" : "at " + d.where) +
              ", raise an exception instead of ending the worker (sys.exit, os._exit): the Pool "
              "sends it back and map() or get() raises it; or use "
              "concurrent.futures.ProcessPoolExecutor, whose futures fail with BrokenProcessPool "
              "when a worker dies";
      if (d.where.empty())
        c.missing = "where the task ended its worker (nothing of its end was told)";
    } else {
      c.fix =
          "use concurrent.futures.ProcessPoolExecutor, whose futures fail with "
          "BrokenProcessPool when a worker dies, instead of waiting for ever; why pid " +
          std::to_string(d.pid) + " was " + d.how + " is the worker's own failure";
      c.missing = "who sent the signal that killed pid " + std::to_string(d.pid);
    }
    return c;
  }
  return std::nullopt;
}

// concurrent.futures' executor broken by a worker's death: which worker, how it ended, its line.
std::optional<KnownCause> broken_process_pool(const Variant& v) {
  if (v.outcome != "error") return std::nullopt;
  const auto error = program_error(v);
  if (!error || error->type.find("BrokenProcessPool") == std::string::npos) return std::nullopt;
  // The executor's own workers (their target is concurrent.futures' _process_worker).
  std::vector<DescendantEnd> dead;
  for (auto& d : ended_badly(v))
    if (d.what.find("_process_worker") != std::string::npos) dead.push_back(std::move(d));
  KnownCause c = made("broken-process-pool");
  if (dead.empty()) {
    c.cause =
        "a worker of the ProcessPoolExecutor ended while futures were pending, and the "
        "executor is broken";
    c.missing = "which worker and how it ended (the program's Python processes were not all seen)";
    return c;
  }
  const DescendantEnd& d = dead.front();
  c.cause = "pid " + std::to_string(d.pid) + (d.what.empty() ? "" : " " + d.what) + " " + d.how +
            (d.where.empty() ? "" : " at " + d.where) +
            ": a ProcessPoolExecutor whose worker dies is broken, and every pending future fails "
            "with BrokenProcessPool";
  if (exited(d) && !d.where.empty())
    c.fix = "at " + d.where +
            ", raise an exception instead of ending the worker: the executor sends it back to "
            "that task's future, and the pool stays whole";
  else if (exited(d))
    c.missing = "where the worker ended itself";
  else
    c.missing = "why pid " + std::to_string(d.pid) + " was " + d.how;
  return c;
}

// PyTorch's "DataLoader worker (pid(s) N) exited unexpectedly" / "(pid N) is killed by signal":
// which worker, how it ended and where, from what forkcheck saw of it.
std::optional<KnownCause> dataloader_worker_died(const Variant& v) {
  if (v.outcome != "error" && v.outcome != "crash") return std::nullopt;
  const std::string said = v.stderr_text + "\n" + v.message;
  const auto at = said.find("DataLoader worker (pid");
  const auto digits = at == std::string::npos ? at : said.find_first_of("0123456789", at);
  KnownCause c = made("dataloader-worker-died");
  if (digits == std::string::npos) {
    // The main process may fail otherwise as the worker dies (a ConnectionResetError reading
    // from it): a DataLoader worker (torch's _worker_loop) killed by a signal is still the cause.
    for (const auto& d : ended_badly(v))
      if (d.what.find("torch.utils.data._utils.worker._worker_loop") != std::string::npos &&
          d.how.rfind("killed by", 0) == 0) {
        const auto error = program_error(v);
        c.cause = "DataLoader worker pid " + std::to_string(d.pid) + " " + d.how +
                  (d.where.empty() ? "" : " at " + d.where) +
                  (error ? "; the main process, iterating over its batches, failed with " +
                               shorten(one_line(error->type + ": " + error->message), 120)
                         : std::string());
        if (d.where.empty()) c.missing = "where the worker was when it died";
        return c;
      }
    return std::nullopt;
  }
  const int pid = std::atoi(said.c_str() + digits);
  for (const auto& d : ended_badly(v))
    if (d.pid == pid) {
      c.cause = "DataLoader worker pid " + std::to_string(pid) + " " + d.how +
                (d.where.empty() ? "" : " at " + d.where) +
                ": the DataLoader raises its death in the main process, which says no more";
      if (d.where.empty()) c.missing = "where the worker was when it died";
      return c;
    }
  c.cause = "DataLoader worker pid " + std::to_string(pid) + " died";
  c.missing = "how and where: forkcheck saw no end of pid " + std::to_string(pid);
  return c;
}

// A thread of the program's process that died: its exception as the bootstrap told it.
const PythonException* thread_exception(const Variant& v, const std::string& pid,
                                        const char* through) {
  const PythonProcess* p = python_process(v, pid);
  if (!p) return nullptr;
  for (const auto& x : p->exceptions) {
    if (x.where != "thread") continue;
    for (const auto& f : x.frames)
      if (f.function == through) return &x;
  }
  return nullptr;
}

// A thread waiting for a Pool's result (map, get, ...): "pid 41 at p.py:11 in <module>", and the
// pid; "" when none.
std::pair<std::string, std::string> pool_waiter(const Variant& v) {
  for (const auto& t : v.stacks)
    for (const char* f : {"map", "starmap", "get", "wait", "apply", "next"})
      if (passes(t, "multiprocessing/pool.py", f) && !users_line(t).empty())
        return {"pid " + std::to_string(t.pid) + " at " + users_line(t), std::to_string(t.pid)};
  return {"", ""};
}

// gh-103061: a task's exception that pickles in the worker but cannot be rebuilt in the parent
// kills the Pool's result-handler thread; no result arrives any more.
std::optional<KnownCause> pool_result_handler_died(const Variant& v) {
  if (!stopped(v)) return std::nullopt;
  const auto [waiter, pid] = pool_waiter(v);
  if (waiter.empty()) return std::nullopt;
  const PythonException* x = thread_exception(v, pid, "_handle_results");
  if (!x) return std::nullopt;
  KnownCause c = made("pool-result-handler-died");
  const std::string type = last_name(x->type);
  const std::string& message = x->message;
  c.cause = "pid " + pid + "'s Pool result-handler thread died on " + type + ": " +
            shorten(message, 160) +
            " while it unpickled what a task sent back: no result arrives any more, so " + waiter +
            " waits for ever";
  // "MyError.__init__() missing 1 required positional argument": an exception class whose
  // __init__ takes what it does not pass on to Exception.__init__ (the shape).
  if (type == "TypeError" && message.find("__init__() missing") != std::string::npos) {
    const std::string cls = message.substr(0, message.find("__init__()"));
    c.fix = "make the exception the task raises" +
            (cls.empty() ? std::string("") : " (" + cls.substr(0, cls.size() - 1) + ")") +
            " rebuildable by pickle: pass every argument of its __init__ on to "
            "super().__init__(), as pickle rebuilds it from those (" +
            shorten(message, 120) + ")";
  } else {
    c.missing = "why the task's result could not be unpickled";
  }
  return c;
}

// gh-155890: a process pool used while a module is imported, the task's function defined in that
// module: the feeder thread, pickling it by reference, waits for the module's import lock, which
// the importing thread holds while it waits for the task.
std::optional<KnownCause> pool_used_during_import(const Variant& v) {
  if (!stopped(v)) return std::nullopt;
  for (const auto& feeder : v.stacks) {
    if (!passes(feeder, "multiprocessing/queues.py", "_feed") ||
        !(passes(feeder, "<frozen importlib._bootstrap>", "_lock_unlock_module") ||
          passes(feeder, "<frozen importlib._bootstrap>", "_find_and_load")))
      continue;
    for (const auto& importer : v.stacks) {
      const std::string line = users_line(importer);
      if (importer.pid != feeder.pid || importer.tid == feeder.tid ||
          !passes(importer, "<frozen importlib._bootstrap>", "_find_and_load") ||
          line.size() < 12 || line.compare(line.size() - 12, 12, " in <module>") != 0)
        continue;
      KnownCause c = made("pool-used-during-import");
      const std::string pid = std::to_string(feeder.pid);
      const std::string thread =
          importer.name == "MainThread" ? "main thread" : "thread " + importer.name;
      c.cause = "pid " + pid +
                "'s queue feeder thread waits for the import lock of a module that " + "its " +
                thread + " is still importing: that thread " + "runs the module's body (" + line +
                ") and waits there for a process pool's task, whose function the feeder must "
                "import that module to pickle";
      c.fix = "at " + line.substr(0, line.size() - 12) +
              ", do not use a process pool while the module is being imported: move that code "
              "into a function, called from the main program under if __name__ == "
              "\"__main__\":";
      return c;
    }
  }
  return std::nullopt;
}

// gh-126743: a Pool's result read after the pool was terminated (leaving a `with Pool()` block
// terminates it): its workers and handler threads are gone, and nothing can set the result.
std::optional<KnownCause> pool_result_after_terminate(const Variant& v) {
  if (!stopped(v)) return std::nullopt;
  for (const auto& t : v.stacks) {
    if (!passes(t, "multiprocessing/pool.py", "get") &&
        !passes(t, "multiprocessing/pool.py", "wait"))
      continue;
    const std::string line = users_line(t);
    if (line.empty()) continue;
    // The Pool's own threads (workers, tasks, results) in that process: none left.
    bool handlers = false;
    for (const auto& other : v.stacks)
      for (const char* h : {"_handle_workers", "_handle_tasks", "_handle_results"})
        handlers = handlers || (other.pid == t.pid && passes(other, "multiprocessing/pool.py", h));
    if (handlers || v.stacks.size() != 1) continue;
    KnownCause c = made("pool-result-after-terminate");
    c.cause = "pid " + std::to_string(t.pid) + " waits at " + line +
              " for a Pool task's result, but the Pool is gone (no worker process and none of "
              "its threads is left): it was terminated before the task ended (pool.terminate(), "
              "which leaving a `with Pool()` block calls), and nothing can set the result now";
    c.fix = "at " + line.substr(0, line.find(" in ")) +
            ", take the result while the Pool is alive: inside the `with Pool()` block, or "
            "close() and join() the pool rather than terminate it";
    return c;
  }
  return std::nullopt;
}

// Python process `pid` (as a pid's text: the stacks' and the wait chain's name), or nullptr.
const PythonProcess* python_process(const Variant& v, const std::string& pid) {
  if (!v.python) return nullptr;
  for (const auto& p : v.python->processes)
    if (p.pid && std::to_string(*p.pid) == pid) return &p;
  return nullptr;
}

// A process the program asked to end (terminate()) that went on: its SIGTERM handler returned.
// The joiner then waits for ever.
std::optional<KnownCause> sigterm_handler_returned(const Variant& v) {
  if (!stopped(v)) return std::nullopt;
  for (const auto& joiner : v.stacks) {
    if (!passes(joiner, "multiprocessing/process.py", "join")) continue;
    const PythonProcess* parent = python_process(v, std::to_string(joiner.pid));
    if (!parent) continue;
    for (const auto& asked : parent->ends_asked) {
      const std::string child = asked.child ? std::to_string(*asked.child) : "";
      if (asked.how != "terminate") continue;
      // Still there when time was called, and it had set a SIGTERM handler of its own.
      bool alive = false;
      for (const auto& t : v.stacks) alive = alive || std::to_string(t.pid) == child;
      const PythonProcess* worker = python_process(v, child);
      if (!alive || !worker) continue;
      // The join waits for that child (the wait chain), which is blocked: not asleep in a step
      // that ends, after which its loop would see the handler's flag.
      const WaitChain& chain = chain_of(v);
      bool joins_it = false;
      for (const WaitLink& l : chain.links)
        joins_it = joins_it || (l.pid == joiner.pid && l.on == "child" && l.child &&
                                std::to_string(*l.child) == child);
      const auto p = chain.processes.find(child);
      const std::string state = p == chain.processes.end() ? "" : p->second.state;
      if (chain.read && (!joins_it || state != "blocked")) continue;
      const PythonSignalHandler* handler = nullptr;
      for (const auto& h : worker->signal_handlers)
        if (h.signal == "SIGTERM") handler = &h;
      const std::string name = handler ? handler->handler : "";
      if (!handler || name == "SIG_DFL" || name == "SIG_IGN") continue;
      KnownCause c = made("sigterm-handler-returned");
      const auto frame_text = [](const std::optional<PythonFrame>& f) {
        return f ? python_frame_text(*f) : python_frame_text(PythonFrame{});
      };
      const std::string set_at = frame_text(handler->where);
      const std::string join_line = users_line(joiner);
      c.cause = "pid " + std::to_string(joiner.pid) + " asked pid " + child +
                " to end (terminate() at " + frame_text(asked.where) + ": SIGTERM), but pid " +
                child + "'s SIGTERM handler " + name + " (set at " + set_at +
                ") returned and the process went on, so the join()" +
                (join_line.empty() ? "" : " at " + join_line) + " waits for ever";
      if (!chain.read) {
        c.missing = "that the join() waits for pid " + child + ", and that pid " + child +
                    " is blocked, not asleep (read on Linux only)";
        return c;
      }
      c.fix = "in " + name + " (set at " + set_at +
              "), end the process once it has cleaned up (sys.exit()), or leave SIGTERM to its "
              "default in processes the program terminates";
      return c;
    }
  }
  return std::nullopt;
}

// A function defined inside another (or a lambda) given to a process or a pool under spawn or
// forkserver: pickling it to reach the worker fails in the parent.
std::optional<KnownCause> local_function_to_worker(const Variant& v) {
  if (v.outcome != "error") return std::nullopt;
  const auto error = program_error(v);
  if (!error) return std::nullopt;
  // A queue's feeder thread prints its own pickling errors: not what ended the program.
  for (const auto& f : error->frames)
    if (f.function == "_feed") return std::nullopt;
  const std::string& m = error->message;
  std::string name;
  for (const char* said : {"Can't pickle local object '", "Can't get local object '"})
    if (const auto at = m.find(said); at != std::string::npos) {
      const auto from = at + std::string(said).size();
      name = m.substr(from, m.find('\'', from) - from);
    }
  const bool lambda =
      name.empty() && m.find("Can't pickle <function <lambda>") != std::string::npos;
  if (name.empty() && !lambda) return std::nullopt;
  KnownCause c = made("local-function-to-worker");
  const std::string line = error_headline(v);
  const std::string at = line.substr(0, line.find(": "));
  const std::string started =
      at.empty() || at.find(".py:") == std::string::npos ? "" : " (at " + at + ")";
  if (lambda) {
    c.cause =
        "a lambda was given to a process or a pool: its target or task is pickled to reach "
        "the worker, and a lambda has no name pickle can find (" +
        shorten(one_line(error->type + ": " + m), 160) + ")";
    c.fix = "give it a function defined with def at module level instead of the lambda" + started;
    return c;
  }
  const std::string function = name.substr(name.rfind('.') + 1);
  c.cause = "'" + name +
            "' is defined inside a function: a process or pool started with spawn or forkserver "
            "pickles its target to send it to the worker, and pickle finds a function by its "
            "module-level name only (" +
            shorten(one_line(error->type + ": " + m), 160) + ")";
  c.fix = "define " + function + " at module level (not inside " +
          name.substr(0, name.find(".<locals>")) +
          "), and pass what it used from the enclosing function as arguments" + started;
  return c;
}

using Matcher = std::optional<KnownCause> (*)(const Variant&);

const std::vector<std::pair<CauseRule, Matcher>>& table() {
  static const std::vector<std::pair<CauseRule, Matcher>> rules = {
      {{"queue-joined-before-drained",
        "a process joined before what it put on a multiprocessing.Queue was taken",
        "https://docs.python.org/3/library/multiprocessing.html#all-start-methods",
        "queue_join_before_drain.py"},
       queue_joined_before_drained},
      {{"queue-put-unpicklable",
        "an object that cannot be pickled put on a multiprocessing.Queue; a get() waits for it",
        "https://github.com/python/cpython/issues/84376", "queue_put_unpicklable.py"},
       queue_put_unpicklable},
      {{"pool-worker-ended-mid-task",
        "a multiprocessing.Pool worker ended while it ran a task; map() or get() waits for ever",
        "https://github.com/python/cpython/issues/66587", "pool_task_exits.py"},
       pool_worker_ended},
      {{"pool-result-handler-died",
        "a task's exception that cannot be rebuilt in the parent kills a Pool's result handler",
        "https://github.com/python/cpython/issues/103061", "pool_exception_unpicklable.py"},
       pool_result_handler_died},
      {{"pool-used-during-import",
        "a process pool used while a module is imported, on a function of that module",
        "https://github.com/python/cpython/issues/155890", "executor_at_import.py"},
       pool_used_during_import},
      {{"pool-result-after-terminate",
        "a Pool's result read after the pool was terminated (after its `with` block)",
        "https://github.com/python/cpython/issues/126743", "pool_result_after_with.py"},
       pool_result_after_terminate},
      {{"sigterm-handler-returned",
        "a process asked to end (terminate()) catches SIGTERM and goes on; join() waits",
        "https://github.com/borgstrom/offspring/issues/2", "sigterm_handler_no_exit.py"},
       sigterm_handler_returned},
      {{"local-function-to-worker",
        "a function defined inside another, or a lambda, given to a worker: it cannot be pickled",
        "https://docs.python.org/3/library/"
        "multiprocessing.html#the-spawn-and-forkserver-start-methods",
        "local_function_spawn.py"},
       local_function_to_worker},
      {{"broken-process-pool", "a ProcessPoolExecutor's worker died: BrokenProcessPool",
        "https://docs.python.org/3/library/"
        "concurrent.futures.html#concurrent.futures.process.BrokenProcessPool",
        "broken_process_pool.py"},
       broken_process_pool},
      {{"dataloader-worker-died", "a PyTorch DataLoader worker died: \"exited unexpectedly\"",
        "https://github.com/pytorch/pytorch/issues/4969", "../dataloader_segfault.py"},
       dataloader_worker_died},
  };
  return rules;
}

}  // namespace

const std::vector<CauseRule>& cause_rules() {
  static const std::vector<CauseRule> rules = [] {
    std::vector<CauseRule> out;
    for (const auto& [rule, match] : table()) out.push_back(rule);
    return out;
  }();
  return rules;
}

std::string cause_shape(const std::string& id) {
  for (const auto& r : cause_rules())
    if (id == r.id) return r.shape;
  return "";
}

std::optional<KnownCause> known_cause(const Variant& variant) {
  for (const auto& [rule, match] : table())
    if (auto c = match(variant)) return c;
  return std::nullopt;
}

json to_json(const KnownCause& c) {
  json j = {{"rule", c.rule}, {"source", c.source}, {"cause", c.cause}};
  if (!c.fix.empty()) j["fix"] = c.fix;
  if (!c.missing.empty()) j["missing"] = c.missing;
  return j;
}

}  // namespace fc::reports
