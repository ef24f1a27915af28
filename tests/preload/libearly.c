/* SPDX-License-Identifier: MIT */
/*
 * A library whose constructor forks, exits or _exits, possibly before the
 * shim's constructor has run (preloaded before or after it): libfaketime's
 * test_library_constructors pattern.  EARLY_MODE=fork|exit|_exit; unset,
 * it does nothing.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((constructor)) static void early(void)
{
    const char *mode = getenv("EARLY_MODE");
    int status;
    pid_t child;

    if (mode == NULL)
        return;
    if (strcmp(mode, "fork") == 0) {
        child = fork();
        if (child == 0)
            _exit(7);
        if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 7)
            _exit(99);
    } else if (strcmp(mode, "exit") == 0) {
        exit(5);
    } else if (strcmp(mode, "_exit") == 0) {
        _exit(6);
    }
}
