#include "config.h"

#include "children.h"
#include "fork_page.h"

#include <unistd.h>

/* The table lives on the fork page (fork_page.h): a child inherits its
 * parent's table, which it only reads until its own first fork. */

static int mine(pid_t self)
{
    return atomic_load(&scl_fork_page.children_owner) == self;
}

void scl_children_add(pid_t pid)
{
    pid_t self = getpid();

    if (!mine(self)) {
        /* The first fork of this process: forget the parent's children. */
        for (size_t i = 0; i < SCL_CHILD_SLOTS; i++)
            atomic_store(&scl_fork_page.children[i], 0);
        atomic_store(&scl_fork_page.children_overflowed, 0);
        atomic_store(&scl_fork_page.children_owner, self);
    }
    for (size_t n = 0, i = (size_t)pid % SCL_CHILD_SLOTS; n < SCL_CHILD_SLOTS; n++, i = (i + 1) % SCL_CHILD_SLOTS) {
        pid_t empty = 0;
        if (atomic_compare_exchange_strong(&scl_fork_page.children[i], &empty, pid))
            return;
    }
    atomic_store(&scl_fork_page.children_overflowed, 1);
}

void scl_children_remove(pid_t pid)
{
    if (!mine(getpid()))
        return;
    for (size_t n = 0, i = (size_t)pid % SCL_CHILD_SLOTS; n < SCL_CHILD_SLOTS; n++, i = (i + 1) % SCL_CHILD_SLOTS) {
        pid_t found = pid;
        if (atomic_compare_exchange_strong(&scl_fork_page.children[i], &found, 0))
            return;
    }
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
