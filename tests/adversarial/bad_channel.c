// Hostile: says nonsense on the channel. Writes argv[1] (or, with "huge", a 17 MiB line; with
// "deep", details nested 100,000 levels; with "newlines", 8 MiB of empty lines) and a newline to
// FORKCHECK_CHANNEL_FD, then a valid result, then exits 0.
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void put(int fd, const char* s, size_t n) {
  while (n > 0) {
    ssize_t k = write(fd, s, n);
    if (k <= 0) return;
    s += k;
    n -= (size_t)k;
  }
}

int main(int argc, char** argv) {
  const char* fd_text = getenv("FORKCHECK_CHANNEL_FD");
  if (!fd_text || argc < 2) return 64;
  int fd = atoi(fd_text);
  if (strcmp(argv[1], "huge") == 0) {
    size_t n = 17u << 20;
    char* big = malloc(n);
    if (!big) return 1;
    memset(big, 'x', n);
    put(fd, big, n);
    free(big);
  } else if (strcmp(argv[1], "deep") == 0) {
    const size_t depth = 100000;
    const char* head = "{\"ev\":\"details\",\"details\":{\"a\":";
    put(fd, head, strlen(head));
    char* opens = malloc(depth);
    char* closes = malloc(depth + 2);
    if (!opens || !closes) return 1;
    memset(opens, '[', depth);
    memset(closes, ']', depth);
    closes[depth] = '}';
    closes[depth + 1] = '}';
    put(fd, opens, depth);
    put(fd, closes, depth + 2);
    free(opens);
    free(closes);
  } else if (strcmp(argv[1], "newlines") == 0) {
    size_t n = 8u << 20;
    char* lines = malloc(n);
    if (!lines) return 1;
    memset(lines, '\n', n);
    put(fd, lines, n);
    free(lines);
  } else {
    put(fd, argv[1], strlen(argv[1]));
  }
  put(fd, "\n", 1);
  const char* ok = "{\"ev\":\"result\",\"outcome\":\"ok\",\"message\":\"all fine, it says\"}\n";
  put(fd, ok, strlen(ok));
  return 0;
}
