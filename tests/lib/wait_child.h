/* SPDX-License-Identifier: MIT */
/* For Check tests that fork: the exit code of child PID (128+N when
 * signal N killed it), once it has ended. */
#ifndef SCL_TESTS_WAIT_CHILD_H
#define SCL_TESTS_WAIT_CHILD_H

#include <check.h>
#include <sys/types.h>
#include <sys/wait.h>

__attribute__((unused)) static int wait_exit_code(pid_t pid)
{
    int status;

    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#endif
