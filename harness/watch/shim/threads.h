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

/* The threads alive at a fork, listed in two steps: their ids just before it (from the fork's
 * pthread_atfork prepare handler, or, where that did not run, right after), then, in the parent
 * after the fork, those still there are written. A thread some other prepare handler stopped
 * (OpenBLAS joins its pool), one listed as it was being joined, is gone by then and not counted,
 * whatever order the handlers ran in. */
#define FC_FORK_TIDS 256
struct fc_fork_threads {
  int listed;     /* the ids were read */
  unsigned count; /* the threads there were, beyond FC_FORK_TIDS too */
  unsigned kept;  /* of tids[] */
  pid_t tids[FC_FORK_TIDS];
};
/* Step one: every thread's id, now. No allocation; errno is left as it was. */
void fc_list_fork_threads(struct fc_fork_threads* t);
/* Step two, after the fork: appends
 *   ,"tid":SELF,"tname":..,"main":B,"thread_list":[{"tid":..,"name":..,"by":..},...],"threads":N
 * of the listed threads that are still there (and not exiting). */
void fc_write_fork_threads(struct fc_line* l, const struct fc_fork_threads* t);

/* In a fork child: every recorded creator, and every start under way, was the parent's. */
void fc_forget_threads(void);

#endif
