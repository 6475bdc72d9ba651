#include "reports/fork_hazard_text.h"

#include "reports/text.h"

namespace fc::reports {
namespace {

using json = nlohmann::json;

struct PoolWords {
  const char* runtime;  // as fork_hazards.cc names it
  const char* pool;     // what it keeps
  const char* why;      // what goes wrong in the child
  const char* instead;  // its own way out, besides spawn/forkserver
};

constexpr const char* kOmpInstead =
    "or call omp_pause_resource_all(omp_pause_hard) before forking, or keep the parent to one "
    "OpenMP thread until the workers exist (torch.set_num_threads(1), OMP_NUM_THREADS=1)";

const PoolWords kPools[] = {
    {"libgomp", "an OpenMP pool",
     "libgomp has no fork handler: in the child, the next parallel region waits forever for "
     "workers that do not exist",
     kOmpInstead},
    {"libomp", "an OpenMP pool",
     "LLVM's libomp starts a new pool in the child (unless KMP_INIT_AT_FORK=FALSE), but locks "
     "its workers held stay held",
     kOmpInstead},
    {"libiomp5", "an OpenMP pool",
     "Intel's OpenMP starts a new pool in the child, but locks its workers held stay held",
     kOmpInstead},
    {"MKL", "an MKL thread pool", "MKL's workers do not exist in the child",
     "or set MKL_NUM_THREADS=1 in the parent"},
    {"BLIS", "a BLIS thread pool", "BLIS's workers do not exist in the child",
     "or set BLIS_NUM_THREADS=1 in the parent"},
    {"TBB", "a TBB worker pool",
     "TBB's scheduler in the child still counts workers that do not exist",
     "or finish TBB (tbb::finalize) before forking"},
};

}  // namespace

json thread_pool_hazard_words(const std::string& runtime, std::size_t threads) {
  const PoolWords* words = nullptr;
  for (const auto& p : kPools)
    if (runtime == p.runtime) words = &p;
  const std::string pool = words ? words->pool : "a thread pool";
  return {{"what", runtime + ": " + pool + " was active (" +
                       counted(threads, "worker thread", "worker threads") + " alive)"},
          {"why", words ? words->why : "its workers do not exist in the child"},
          {"instead", words ? words->instead : ""}};
}

json threads_hazard_words(std::size_t threads, const std::string& names, const std::string& site) {
  return {{"what", (site.empty() ? "" : site + " forked while ") +
                       counted(threads, "other thread was", "other threads were") +
                       " running: " + names},
          {"why",
           "the child has only the forking thread: whatever lock another thread held (malloc's, "
           "the loader's, a runtime's own) stays locked in the child for good"},
          {"instead",
           "or fork before any thread starts (start a forkserver first), or join the threads "
           "before forking"}};
}

json cuda_hazard_words(std::size_t devices) {
  return {
      {"what",
       "CUDA was initialised in the parent (" + counted(devices, "device", "devices") + ")"},
      {"why",
       "the CUDA driver does not survive fork: the child's first CUDA call fails with an "
       "initialization error"},
      {"instead", "or initialise CUDA only in the workers, never in the parent before it forks"}};
}

std::string pool_not_counted_note(const std::string& runtime, std::size_t threads) {
  return runtime + ": " + counted(threads, "pool thread", "pool threads") +
         " not counted: it stops its pool in its own fork handler";
}

std::string cuda_loaded_note() {
  return "libcuda was loaded but CUDA not initialised: no CUDA hazard";
}

std::string start_worker_otherwise(const std::string& unguarded_at) {
  if (!unguarded_at.empty())
    return "put the code that starts workers under `if __name__ == \"__main__\":` (" +
           unguarded_at +
           " runs at the main script's top level, which spawn and forkserver run again in every "
           "worker: there it fails), then start the worker with spawn or forkserver "
           "(multiprocessing.get_context(\"spawn\") or \"forkserver\")";
  return "start the worker with spawn or forkserver (Python: "
         "multiprocessing.get_context(\"spawn\") "
         "or \"forkserver\"; C/C++: posix_spawn, or exec right after fork)";
}

}  // namespace fc::reports
