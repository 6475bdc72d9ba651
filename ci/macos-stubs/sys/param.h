// The host's <sys/param.h> plus what macOS's adds (xnu bsd/sys/param.h).
#pragma once
#include_next <sys/param.h>
#ifndef MAXCOMLEN
#define MAXCOMLEN 16
#endif
