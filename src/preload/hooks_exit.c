/* SPDX-License-Identifier: MIT */
/*
 * The exits that skip destructors: _exit(), _Exit() and quick_exit().
 * exit() and returning from main() are handled by the destructor
 * (lifecycle.c).  Each may run in a signal handler (Apache and uWSGI exit
 * inside theirs), so the release path is async-signal-safe.
 */
#include "config.h"

#include "export.h"
#include "lifecycle.h"
#include "real.h"

#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

/* An exit must exit, even if libc's own could not be found. */
__attribute__((noreturn)) static void exit_anyway(void (*real)(int), int status)
{
    if (real != NULL)
        real(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

SCL_EXPORT void _exit(int status)
{
    scl_process_ending(SCL_ENDS_BY_EXIT);
    exit_anyway(scl_real()->exit_, status);
}

SCL_EXPORT void _Exit(int status)
{
    scl_process_ending(SCL_ENDS_BY_EXIT);
    exit_anyway(scl_real()->Exit, status);
}

SCL_EXPORT void quick_exit(int status)
{
    scl_process_ending(SCL_ENDS_BY_EXIT);
    exit_anyway(scl_real()->quick_exit, status);
}
