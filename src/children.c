#include "config.h"

#include "children.h"

#include <stdatomic.h>
#include <unistd.h>

#define SLOTS 4096

static _Atomic pid_t slots[SLOTS];
static _Atomic pid_t owner; /* a forked child inherits its parent's list */
static atomic_int overflowed;

static int mine(void)
{
    return atomic_load(&owner) == getpid();
}

void scl_children_add(pid_t pid)
{
    pid_t self = getpid();

    if (atomic_load(&owner) != self) {
        /* The first fork of this process: forget the parent's children. */
        for (size_t i = 0; i < SLOTS; i++)
            atomic_store(&slots[i], 0);
        atomic_store(&overflowed, 0);
        atomic_store(&owner, self);
    }
    for (size_t n = 0, i = (size_t)pid % SLOTS; n < SLOTS; n++, i = (i + 1) % SLOTS) {
        pid_t empty = 0;
        if (atomic_compare_exchange_strong(&slots[i], &empty, pid))
            return;
    }
    atomic_store(&overflowed, 1);
}

void scl_children_remove(pid_t pid)
{
    if (!mine())
        return;
    for (size_t n = 0, i = (size_t)pid % SLOTS; n < SLOTS; n++, i = (i + 1) % SLOTS) {
        pid_t found = pid;
        if (atomic_compare_exchange_strong(&slots[i], &found, 0))
            return;
    }
}

int scl_children_each(void (*fn)(pid_t pid, void *arg), void *arg)
{
    if (!mine())
        return 0;
    for (size_t i = 0; i < SLOTS; i++) {
        pid_t pid = atomic_load(&slots[i]);
        if (pid > 0)
            fn(pid, arg);
    }
    return atomic_load(&overflowed) ? -1 : 0;
}
