// Worker::Impl, the parent's side of one running worker, as this platform has it.
#pragma once

#ifdef _WIN32
#include "launch/worker_impl_win32.h"
#else
#include "launch/worker_impl_posix.h"
#endif
