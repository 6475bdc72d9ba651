// forkcheck watch's libtorch subject: a parallel op starts libgomp's pool (2 threads; the sum
// of a 512x512 tensor is above ATen's grain, and it is what enters OpenMP on Debian's build),
// then the process forks and the child does not exec: hazardous, because of libgomp. The child
// does no parallel work itself (it would hang: that is the gomp-fork-hang case, not this test).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include <ATen/ATen.h>  // enough for this, and far quicker to compile than torch/torch.h
#include <ATen/Parallel.h>

int main() {
  at::set_num_threads(2);
  const double sum = at::ones({512, 512}).sum().item<double>();
  std::printf("parent: sum %.0f with %d threads\n", sum, at::get_num_threads());
  std::fflush(stdout);
  pid_t child = ::fork();
  if (child == 0) {
    std::printf("child: no exec, no parallel work\n");
    std::fflush(stdout);
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
  }
  std::printf("parent: child ended with %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return 0;
}
