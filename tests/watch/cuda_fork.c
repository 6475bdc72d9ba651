/* forkcheck watch's CUDA subject, single-threaded: loads a CUDA driver (the path given), calls
 * cuInit when asked, then forks a child that exits without exec. Flagged only after cuInit.
 * Usage: watch_cuda_fork LIBCUDA [init] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* driver = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  if (!driver) {
    fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  if (argc > 2 && strcmp(argv[2], "init") == 0) {
    int (*cu_init)(unsigned) = 0;
    void* sym = dlsym(driver, "cuInit");
    memcpy(&cu_init, &sym, sizeof sym);
    if (!cu_init || cu_init(0) != 0) return 2;
  }
  pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
