/* forkcheck watch and OpenMP's own escape: a parallel region with 2 threads leaves libgomp's
 * pool alive, then the process forks without exec (flagged, naming libgomp); with "pause",
 * omp_pause_resource_all(omp_pause_hard) ends the pool before the fork (not flagged).
 * Usage: watch_omp_fork [pause] */
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
  int ran = 0;
#pragma omp parallel num_threads(2)
  {
#pragma omp atomic
    ++ran;
  }
  if (argc > 1 && strcmp(argv[1], "pause") == 0 && omp_pause_resource_all(omp_pause_hard) != 0)
    return 2;
  printf("parallel region: %d threads\n", ran);
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
