// Stub of macOS's <sys/proc.h> (xnu bsd/sys/proc.h): the status values.
#pragma once
#define SIDL    1
#define SRUN    2
#define SSLEEP  3
#define SSTOP   4
#define SZOMB   5
