// fd-passing-exhaustion (pytorch/pytorch#973, #11201): under torch's default sharing strategy on
// Linux (file_descriptor) every tensor a worker hands over travels as a descriptor passed over a
// Unix socket (SCM_RIGHTS), and the receiver keeps one descriptor per storage it holds. Once it
// holds RLIMIT_NOFILE of them, the next descriptor cannot be installed: the kernel delivers the
// message without it and sets MSG_CTRUNC, and multiprocessing's recvfds raises "received 0 items
// of ancdata". The platform part: fd_passing_exhaustion_linux.cc.
#include "cases/support/fd_passing_exhaustion.h"

#include <string>
#include <vector>

namespace {
namespace fd_passing_exhaustion {

using fc::Outcome;

std::vector<fc::VariantSpec> variants() {
  const std::string why =
      "the parent keeps each storage's descriptor (as torch's allocator keeps the one it maps); "
      "at RLIMIT_NOFILE 32 with 48 storages coming, the kernel has no slot for the next passed "
      "descriptor: Linux's scm_detach_fds drops it, delivers the message without the "
      "SCM_RIGHTS item and sets MSG_CTRUNC";
  std::vector<fc::VariantSpec> v = {
      fc::hazard("fork", "fork", Outcome::kError, why,
                 "2 fork workers each send 24 storages as descriptors (SCM_RIGHTS) to the "
                 "parent, which runs under RLIMIT_NOFILE 32 once they are connected"),
      fc::hazard("spawn", "spawn", Outcome::kError,
                 why + "; the start method changes nothing, the receiver's limit is what runs out",
                 "the same with spawn workers"),
      fc::fix("fork-file-system", "fork",
              "the storages travel by name (shm_open in the parent, torch's "
              "set_sharing_strategy('file_system')): the parent opens, maps and closes each, so "
              "its descriptors do not grow with the storages it holds",
              "the same workers send each storage's shm name instead of its descriptor; the "
              "parent still runs under RLIMIT_NOFILE 32"),
      fc::fix("fork-higher-limit", "fork",
              "RLIMIT_NOFILE 1024 leaves room for the 48 descriptors the parent keeps (ulimit -n, "
              "or resource.setrlimit in the program)",
              "the same descriptor passing with the parent under RLIMIT_NOFILE 1024"),
  };
  return fc::skip_all(std::move(v), fc::cases::fd_passing_exhaustion::unavailable_reason());
}

FORKCHECK_CASE(fd_passing_exhaustion_case) {
  fc::CaseDef c;
  c.id = "fd-passing-exhaustion";
  c.title = "Tensors passed by descriptor exhaust the receiver's RLIMIT_NOFILE";
  c.source_title =
      "pytorch/pytorch#973: file_descriptor sharing strategy may be leaking FDs, resulting in "
      "DataLoader causing `RuntimeError: received 0 items of ancdata` (and #11201: Too many open "
      "files error)";
  c.source_author = "many reporters on #973; #11201 by whucdf";
  c.source_doc = "";
  c.source_url = "https://github.com/pytorch/pytorch/issues/973";
  c.reported =
      "A DataLoader whose main process keeps the tensors it receives fails with \"RuntimeError: "
      "received 0 items of ancdata\" (#973) or \"Too many open files\" (#11201). Workarounds in "
      "the thread: torch.multiprocessing.set_sharing_strategy('file_system'), or raising the "
      "soft RLIMIT_NOFILE.";
  c.mechanism =
      "torch's file_descriptor strategy shm_opens each storage, unlinks the name and passes the "
      "descriptor with SCM_RIGHTS (multiprocessing's resource_sharer, one per storage); the "
      "receiver maps it and keeps a descriptor for as long as it holds the storage. At "
      "RLIMIT_NOFILE the kernel cannot install the next one: recvmsg returns the data with no "
      "control message and MSG_CTRUNC. The file_system strategy passes names instead.";
  c.platforms = "Linux (the receiver's limit, any start method)";
  c.variants = &variants;
  c.run = &fc::cases::fd_passing_exhaustion::run;
  c.explains = {
      {"received 0 items of ancdata",
       "tensors passed by descriptor ran the receiving process out of descriptors: "
       "torch.multiprocessing.set_sharing_strategy('file_system'), or a higher ulimit -n"},
      {"Too many open files",
       "if tensors are passed between processes (DataLoader workers, torch.multiprocessing "
       "queues), each holds a descriptor: set_sharing_strategy('file_system'), or a higher "
       "ulimit -n"},
  };
  // What in the environment may explain a change of its outcome (forkcheck diff).
  c.environment_topics = {"open-files", "kernel", "os", "start-methods"};
  return c;
}

}  // namespace fd_passing_exhaustion
}  // namespace
