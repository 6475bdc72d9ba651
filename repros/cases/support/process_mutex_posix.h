// The cross-process mutex of shared_memory.h on POSIX: a PTHREAD_PROCESS_SHARED mutex placed in
// the segment, robust where the OS has robust mutexes (Linux).
#pragma once

#include <pthread.h>

namespace fc::cases {

using ProcessMutex = pthread_mutex_t;

}  // namespace fc::cases
