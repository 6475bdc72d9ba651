/* Which library started each thread, and the threads alive now. libgomp's and OpenBLAS's workers
 * carry their creator's name (/proc comm), so a name cannot say "this is an OpenMP worker"; the
 * code that called pthread_create can. The shim wraps pthread_create, notes the library of the
 * caller (past libstdc++'s std::thread), and the new thread files its tid under that library. */
#ifndef FC_THREADS_H
#define FC_THREADS_H

#include <sys/types.h>

struct fc_line;

/* The library that started thread `tid` ("libgomp.so.1"), or 0 when the shim did not see it
 * start (it predates the shim, or was started without pthread_create). */
const char* fc_thread_creator(pid_t tid);

/* Appends the snapshot of the live threads:
 *   ,"tid":SELF,"tname":..,"main":B,"thread_list":[{"tid":..,"name":..,"by":..},...],"threads":N
 * Runs in the parent, before the real fork. */
void fc_snapshot_threads(struct fc_line* l);

/* In a fork child: every recorded creator, and every start under way, was the parent's. */
void fc_forget_threads(void);

#endif
