// Stub of macOS's <sys/sysctl.h> (xnu bsd/sys/sysctl.h): the names and the function used.
#pragma once
#include <stddef.h>
#include <sys/types.h>
#define CTL_KERN                1
#define KERN_ARGMAX             8
#define KERN_PROCARGS2          49
#ifdef __cplusplus
extern "C" {
#endif
int     sysctl(int *, u_int, void *, size_t *, void *, size_t);
int     sysctlbyname(const char *, void *, size_t *, void *, size_t);
#ifdef __cplusplus
}
#endif
