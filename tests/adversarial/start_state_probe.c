// Hostile only by curiosity: prints, as one JSON object, what it started with: its open
// descriptors (number and target), its blocked and ignored signals (/proc/self/status masks) and
// FORKCHECK_CHANNEL_FD. Linux.
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  printf("{\"fds\":{");
  DIR* d = opendir("/proc/self/fd");
  int first = 1, self_fd = d ? dirfd(d) : -1;
  struct dirent* e;
  while (d && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' || atoi(e->d_name) == self_fd) continue;
    char path[300], target[512];
    snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
    ssize_t n = readlink(path, target, sizeof target - 1);
    target[n > 0 ? n : 0] = '\0';
    for (char* p = target; *p; ++p)
      if (*p == '"' || *p == '\\') *p = '_';
    printf("%s\"%s\":\"%s\"", first ? "" : ",", e->d_name, target);
    first = 0;
  }
  if (d) closedir(d);
  printf("}");
  FILE* status = fopen("/proc/self/status", "r");
  char line[256];
  while (status && fgets(line, sizeof line, status)) {
    char mask[32];
    if (sscanf(line, "SigBlk: %31s", mask) == 1) printf(",\"blocked\":\"%s\"", mask);
    if (sscanf(line, "SigIgn: %31s", mask) == 1) printf(",\"ignored\":\"%s\"", mask);
  }
  if (status) fclose(status);
  const char* chan = getenv("FORKCHECK_CHANNEL_FD");
  printf(",\"channel\":\"%s\"}\n", chan ? chan : "");
  return 0;
}
