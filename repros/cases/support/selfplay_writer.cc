// selfplay-pipeline's one writer process (source 001): receives every actor's records, counts
// them per actor, writes them to a file, and times them as they arrive (the source's reason for
// one writer: the total and the rate). It needs no torch, so it is compiled into both repro
// programs: forked from the torch program under fork and forkserver, and under spawn exec'd as
// the native program, which does not pay libtorch's start-up for a process that never uses it
// (selfplay_pipeline.cc says which program ran it).
//
// It listens before it publishes its port, so no actor's connection is refused; it gives up after
// 20 s without a byte from any actor (saying how many ended), and at once when an actor's
// connection drops in the middle of a message.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>

#include <forkcheck/launch.h>
#include "cases/support/record_queue.h"
#include "launch/process.h"

namespace {

namespace queue = fc::cases::record_queue;

// Seconds on the steady clock (CLOCK_MONOTONIC on Linux): only differences are used.
double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

FORKCHECK_WORKER(selfplay_writer) {
  queue::Writer records(payload.at("queue").get<std::string>(), payload.at("actors").get<int>(),
                        std::chrono::seconds(20));
  std::ofstream out(payload.at("records").get<std::string>());
  std::map<std::string, long> received, claimed;
  long written = 0;
  double first = 0, last = 0;
  std::string m;
  while (records.next(m)) {
    char kind = 0;
    int actor = 0;
    long count = 0;
    if (std::sscanf(m.c_str(), "%c %d %ld", &kind, &actor, &count) != 3)
      throw std::runtime_error("bad message: " + m.substr(0, 40));
    const std::string key = std::to_string(actor);
    if (kind == 'E') {
      claimed[key] = count;
      continue;
    }
    const std::string body = m.substr(m.find('\n') + 1);
    const long lines = static_cast<long>(std::count(body.begin(), body.end(), '\n'));
    out << body;
    received[key] += lines;
    written += lines;
    last = now_s();
    if (first == 0) first = last;
  }
  out.close();
  return {{"pid", fc::launch::current_process_id()},
          {"received", received},
          {"claimed", claimed},
          {"written", written},
          {"first_record_at", first},
          {"last_record_at", last}};
}

}  // namespace
