// The host's <sys/socket.h> plus what macOS's adds (xnu bsd/sys/socket.h).
#pragma once
#include_next <sys/socket.h>
#ifndef SO_NOSIGPIPE
#define SO_NOSIGPIPE 0x1022 /* APPLE: No SIGPIPE on EPIPE */
#endif
