// Hostile: a process whose main thread ended (pthread_exit) while another thread goes on: /proc
// shows it as a zombie, yet it lives. "busy": the other thread computes; "escape": the child
// forks D and exits, and D's main thread ends while D's other thread blocks, D's pid printed.
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void* spin(void* arg) {
  (void)arg;
  volatile unsigned long x = 0;
  for (;;) x = x + 1;
  return NULL;
}

static void* block(void* arg) {
  (void)arg;
  for (;;) pause();
  return NULL;
}

int main(int argc, char** argv) {
  pthread_t t;
  if (argc > 1 && strcmp(argv[1], "escape") == 0) {
    pid_t d = fork();
    if (d != 0) {
      usleep(100 * 1000);  // D's main thread has ended
      printf("%d\n", (int)d);
      return 0;
    }
    pthread_create(&t, NULL, block, NULL);
    pthread_exit(NULL);
  }
  pthread_create(&t, NULL, spin, NULL);
  pthread_exit(NULL);
}
