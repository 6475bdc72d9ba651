// shm-bus-error (pytorch/pytorch#5040 and many since): DataLoader workers hand their batches to
// the main process through shared memory files in /dev/shm; in a container whose /dev/shm is
// Docker's default 64 MiB, the files outgrow it and a worker dies of SIGBUS ("bus error"). Here
// the shm directory is a 4 MiB tmpfs mounted for the variant alone, the workers need 6 MiB.
// The platform part (mount namespace, storage files): shm_bus_error_linux.cc.
#include "cases/support/shm_bus_error.h"

#include <string>
#include <vector>

namespace {
namespace shm_bus_error {

using fc::Outcome;

std::vector<fc::VariantSpec> variants() {
  const std::string full =
      "2 workers each fill 3 storages of 1 MiB, kept for the parent, in a 4 MiB tmpfs: "
      "ftruncate only sets a file's size (sparse), tmpfs allocates a page at its first write, "
      "and a page fault on a shared file mapping that the tmpfs cannot back (over its size=) "
      "ends in SIGBUS for the writer (Linux shmem_fault: VM_FAULT_SIGBUS)";
  std::vector<fc::VariantSpec> v = {
      fc::hazard("fork", "fork", Outcome::kCrash, full,
                 "a 4 MiB tmpfs is the shm directory; 2 fork workers each create, size, map and "
                 "fill 3 storage files of 1 MiB there"),
      fc::hazard("spawn", "spawn", Outcome::kCrash,
                 full + "; the start method changes nothing, the space is what runs out",
                 "the same with spawn workers (fresh execs, in the same mount namespace)"),
      fc::hazard("forkserver", "forkserver", Outcome::kCrash,
                 full + "; the start method changes nothing, the space is what runs out",
                 "the same with forkserver workers; the forkserver was forked before the mount, "
                 "so they reach the tmpfs by /proc/<parent pid>/root/<dir>"),
      fc::fix("fork-bigger-shm", "fork",
              "a 16 MiB tmpfs backs every page of the 6 MiB the workers write (docker run "
              "--shm-size; the fix that works with torch too)",
              "the same fork workers with a 16 MiB tmpfs as the shm directory"),
      fc::fix("fork-storage-on-disk", "fork",
              "the storage files live in a directory on disk, whose free space is the disk's; "
              "note that torch's set_sharing_strategy('file_system') is not this: both of its "
              "strategies create storages in /dev/shm (shm_open), so it dies the same way "
              "(verified with torch 1.13); torch.from_file(path, shared=True) maps a file on disk",
              "the same fork workers with the storage files in a temporary directory on disk"),
  };
  return fc::skip_all(std::move(v), fc::cases::shm_bus_error::unavailable_reason());
}

FORKCHECK_CASE(shm_bus_error_case) {
  fc::CaseDef c;
  c.id = "shm-bus-error";
  c.title = "Shared tensors outgrow a small /dev/shm: the worker dies of SIGBUS";
  c.source_title =
      "pytorch/pytorch#5040: Give a better error when we run out of shared memory, instead of "
      "\"RuntimeError: DataLoader worker (pid 13) is killed by signal: Bus error.\"";
  c.source_author = "miraclewkf";
  c.source_doc = "";
  c.source_url = "https://github.com/pytorch/pytorch/issues/5040";
  c.reported =
      "With num_workers > 0 in torch.utils.data.DataLoader, training stopped with "
      "\"RuntimeError: DataLoader worker (pid 13) is killed by signal: Bus error.\"; the issue "
      "asks for a better error when shared memory runs out (Docker's /dev/shm is 64 MiB by "
      "default). torch 1.13 now says \"ERROR: Unexpected bus error encountered in worker. This "
      "might be caused by insufficient shared memory (shm).\" and \"It is possible that "
      "dataloader's workers are out of shared memory. Please try to raise your shared memory "
      "limit.\"";
  c.mechanism =
      "Sharing a tensor with another process puts its storage in a file in /dev/shm (shm_open), "
      "ftruncate'd to the storage's size and mapped MAP_SHARED. ftruncate reserves nothing: tmpfs "
      "allocates each page when it is first written. When the tmpfs is full, that write's page "
      "fault cannot be served and the kernel sends SIGBUS to the writer. Both of torch's sharing "
      "strategies (file_descriptor, file_system) create the file in /dev/shm, so only more shm, "
      "or fewer/smaller shared batches, helps there.";
  c.platforms = "Linux (any start method); the case needs a mount namespace for its small tmpfs";
  c.variants = &variants;
  c.run = &fc::cases::shm_bus_error::run;
  c.explains = {
      {"Unexpected bus error encountered in worker",
       "/dev/shm is too small for the batches shared between processes: a bigger one "
       "(docker run --shm-size=8g, or --ipc=host), or fewer or smaller batches in flight"},
      {"is killed by signal: Bus error",
       "a DataLoader worker ran /dev/shm full (SIGBUS): a bigger /dev/shm (--shm-size), or "
       "fewer or smaller batches in flight"},
      {"out of shared memory",
       "/dev/shm is too small for the batches shared between processes: a bigger one "
       "(--shm-size), or fewer or smaller batches in flight"},
  };
  // The case mounts a 4 MiB tmpfs of its own, in a mount namespace: whether the kernel grants
  // one decides whether it runs at all; /dev/shm's size is what bites the user's program.
  c.environment_topics = {"kernel", "shm", "os", "start-methods"};
  return c;
}

}  // namespace shm_bus_error
}  // namespace
