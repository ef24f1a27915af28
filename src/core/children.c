/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "children.h"
#include "fork_page.h"
#include "own_stack.h"
#include "sigsafe.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

/* A child is found within this many slots of its own but for a table
 * crowded with children that are gone; past it, those are dropped. */
#define PROBES_BEFORE_PRUNING 32

/* The table lives on the fork page (fork_page.h): a child inherits its
 * parent's table, which it only reads until its own first fork. */

static int mine(pid_t self)
{
    return atomic_load(&scl_fork_page.children_owner) == self;
}

/*
 * Drops the children that are gone without a wait the hooks saw: the
 * kernel reaped them (SIGCHLD ignored, SA_NOCLDWAIT), or the host did with
 * a raw system call.  A pid that now names another process stays: only
 * this process's children read the marks of its slots (drain.c), and a
 * new child born with that pid clears its slot's mark first.
 */
static void prune(void *unused)
{
    int saved = errno;

    (void)unused;
    for (size_t i = 0; i < SCL_CHILD_SLOTS; i++) {
        pid_t pid = atomic_load(&scl_fork_page.children[i]);
        if (pid > 0 && scl_kill(pid, 0) != 0 && errno == ESRCH)
            atomic_compare_exchange_strong(&scl_fork_page.children[i], &pid, 0);
    }
    errno = saved;
}

/* PID in its slot within LIMIT probes: the slot, or -1. */
static int insert(pid_t pid, size_t limit)
{
    for (size_t n = 0, i = (size_t)pid % SCL_CHILD_SLOTS; n < limit; n++, i = (i + 1) % SCL_CHILD_SLOTS) {
        pid_t empty = 0;
        if (atomic_compare_exchange_strong(&scl_fork_page.children[i], &empty, pid))
            return (int)i;
    }
    return -1;
}

int scl_children_add(pid_t pid)
{
    pid_t self = getpid();
    int slot;

    if (!mine(self)) {
        /* The first fork of this process: forget the parent's children. */
        for (size_t i = 0; i < SCL_CHILD_SLOTS; i++)
            atomic_store(&scl_fork_page.children[i], 0);
        atomic_store(&scl_fork_page.children_overflowed, 0);
        atomic_store(&scl_fork_page.children_owner, self);
    }
    if ((slot = insert(pid, PROBES_BEFORE_PRUNING)) >= 0)
        return slot;
    scl_on_own_stack(prune, NULL); /* a thousand kill()s, perhaps in a signal handler */
    if ((slot = insert(pid, SCL_CHILD_SLOTS)) < 0)
        atomic_store(&scl_fork_page.children_overflowed, 1);
    return slot;
}

/* PID's slot, found from where insert() put it: -1 when it is not there. */
static int find(pid_t pid)
{
    for (size_t n = 0, i = (size_t)pid % SCL_CHILD_SLOTS; n < SCL_CHILD_SLOTS; n++, i = (i + 1) % SCL_CHILD_SLOTS)
        if (atomic_load(&scl_fork_page.children[i]) == pid)
            return (int)i;
    return -1;
}

int scl_children_remove(pid_t pid)
{
    int slot;

    if (pid <= 0 || !mine(getpid()))
        return -1;
    do {
        pid_t found = pid;
        if ((slot = find(pid)) < 0 || atomic_compare_exchange_strong(&scl_fork_page.children[slot], &found, 0))
            return slot;
    } while (1); /* another thread removed it meanwhile: look again */
}

int scl_children_slot(pid_t pid)
{
    return pid > 0 && mine(getpid()) ? find(pid) : -1;
}

int scl_children_each(void (*fn)(pid_t pid, void *arg), void *arg)
{
    if (!mine(getpid()))
        return 0;
    for (size_t i = 0; i < SCL_CHILD_SLOTS; i++) {
        pid_t pid = atomic_load(&scl_fork_page.children[i]);
        if (pid > 0)
            fn(pid, arg);
    }
    return atomic_load(&scl_fork_page.children_overflowed) ? -1 : 0;
}
