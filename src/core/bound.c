#include "config.h"

#include "bound.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

struct scl_bound scl_bound = { sysconf, mmap, mprotect, madvise, munmap, syscall, pthread_setcancelstate, faccessat };
