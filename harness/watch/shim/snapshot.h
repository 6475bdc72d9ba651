/* What the parent records just before a fork, besides its threads (threads.h). Runs in the
 * parent only, before the real fork: it may take the loader's lock (dl_iterate_phdr, dladdr),
 * which a fork child must never do. */
#ifndef FC_SNAPSHOT_H
#define FC_SNAPSHOT_H

struct fc_line;

/* ,"runtimes":["libgomp.so.1",...],"cuda":{"loaded":B[,"initialised":B,"devices":N]}
 * The thread-pool runtimes found as threadpoolctl finds them: by the shared objects mapped
 * (libgomp, libomp, libiomp5, OpenBLAS, MKL, BLIS, FlexiBLAS, TBB), plus libtorch_cpu.
 * CUDA counts as initialised when libcuda is mapped and cuDeviceGetCount succeeds: the driver
 * answers CUDA_ERROR_NOT_INITIALIZED until someone called cuInit, and asking changes nothing. */
void fc_snapshot_runtimes(struct fc_line* l);

/* ,"cmd":"the command line","bt":["module!symbol+0x1f",...]
 * The backtrace (FORKCHECK_WATCH_BACKTRACE=0 turns it off) is of the forking thread, symbolised
 * with dladdr: exported symbols only, else module+offset for addr2line. */
void fc_snapshot_where(struct fc_line* l);

#endif
