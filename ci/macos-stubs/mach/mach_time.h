// Stub of macOS's <mach/mach_time.h> (xnu osfmk/mach/mach_time.h): the types and calls used.
#pragma once
#include <mach/mach.h>
#include <stdint.h>
struct mach_timebase_info {
  uint32_t numer;
  uint32_t denom;
};
typedef struct mach_timebase_info* mach_timebase_info_t;
typedef struct mach_timebase_info mach_timebase_info_data_t;
#ifdef __cplusplus
extern "C" {
#endif
kern_return_t mach_timebase_info(mach_timebase_info_t info);
#ifdef __cplusplus
}
#endif
