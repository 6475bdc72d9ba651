// Stub of macOS's <sys/proc.h> (xnu bsd/sys/proc.h): the status values, and the fields of
// struct extern_proc that forkcheck reads (the real struct has many more, before and between).
#pragma once
#include <stdint.h>
#include <sys/types.h>
#define SIDL 1
#define SRUN 2
#define SSLEEP 3
#define SSTOP 4
#define SZOMB 5
#ifndef MAXCOMLEN
#define MAXCOMLEN 16
#endif
struct extern_proc {
  int p_flag;  /* P_* flags. */
  char p_stat; /* S* process status. */
  pid_t p_pid; /* Process identifier. */
  /* sigset_t on macOS is __uint32_t; the host's sigset_t is another type. */
  uint32_t p_sigmask;   /* DEPRECATED. */
  uint32_t p_sigignore; /* Signals being ignored. */
  uint32_t p_sigcatch;  /* Signals being caught by user. */
  char p_comm[MAXCOMLEN + 1];
};
