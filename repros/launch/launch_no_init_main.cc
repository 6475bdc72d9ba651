// A program that forgets fc::launch::init(): spawn must refuse (its worker would run this main()
// again), while fork, which needs no init(), still works. Exits 0 when both hold.
#include <cstdio>
#include <stdexcept>

#include <forkcheck/launch.h>

FORKCHECK_WORKER(answer) { return 42; }

int main() {
  using fc::launch::Launcher;
  using fc::launch::StartMethod;
  try {
    Launcher(StartMethod::kSpawn).start("answer", nullptr);
    std::puts("spawn started without init()");
    return 1;
  } catch (const std::logic_error& e) {
    std::printf("spawn refused as expected: %s\n", e.what());
  }
  auto out = Launcher(StartMethod::kFork).start("answer", nullptr).join(std::chrono::seconds(30));
  if (!out || out->status != fc::launch::WorkerOutcome::Status::kOk || out->result != 42) {
    std::puts("fork worker failed");
    return 1;
  }
  return 0;
}
