// Stub of macOS's <sys/sysctl.h> (xnu bsd/sys/sysctl.h): the names, the function and the part
// of struct kinfo_proc used.
#pragma once
#include <stddef.h>
#include <sys/proc.h>
#include <sys/types.h>
#define CTL_KERN 1
#define KERN_ARGMAX 8
#define KERN_PROC 14
#define KERN_PROCARGS2 49
#define KERN_PROC_PID 1 /* by process id */
struct kinfo_proc {
  struct extern_proc kp_proc; /* proc structure */
  struct eproc {              /* the fields forkcheck reads */
    pid_t e_ppid;             /* parent process id */
    pid_t e_pgid;             /* process group id */
  } kp_eproc;
};
#ifdef __cplusplus
extern "C" {
#endif
int sysctl(int*, u_int, void*, size_t*, void*, size_t);
int sysctlbyname(const char*, void*, size_t*, void*, size_t);
#ifdef __cplusplus
}
#endif
