// Stub of macOS's <libproc.h> (xnu libsyscall/wrappers/libproc/libproc.h): the declarations used.
#pragma once
#include <stdint.h>
#include <sys/param.h>
#include <sys/proc_info.h>
#include <sys/types.h>
#ifdef __cplusplus
extern "C" {
#endif
int proc_listpids(uint32_t type, uint32_t typeinfo, void* buffer, int buffersize);
int proc_listallpids(void* buffer, int buffersize);
int proc_listpgrppids(pid_t pgrpid, void* buffer, int buffersize);
int proc_listchildpids(pid_t ppid, void* buffer, int buffersize);
int proc_pidinfo(int pid, int flavor, uint64_t arg, void* buffer, int buffersize);
int proc_name(int pid, void* buffer, uint32_t buffersize);
int proc_pidpath(int pid, void* buffer, uint32_t buffersize);
#ifdef __cplusplus
}
#endif
