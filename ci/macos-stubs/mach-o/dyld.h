// Stub of macOS's <mach-o/dyld.h> (dyld include/mach-o/dyld.h): the functions used.
#pragma once
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
int _NSGetExecutablePath(char* buf, uint32_t* bufsize);
uint32_t _dyld_image_count(void);
const char* _dyld_get_image_name(uint32_t image_index);
#ifdef __cplusplus
}
#endif
