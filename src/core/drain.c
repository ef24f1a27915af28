/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "bound.h"
#include "children.h"
#include "drain.h"
#include "fork_page.h"
#include "hot.h"
#include "listeners.h"
#include "log.h"
#include "own_stack.h"
#include "settings.h"
#include "store.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The marks of a process's children: the pid of the child recorded in the
 * same slot of its table of children, or 0. */
struct drain_page {
    _Atomic pid_t marked[SCL_CHILD_SLOTS];
    /* The one child the page's owner left when it exited after it
     * called setsid() itself (the middle of a double fork): a master of
     * its own from then on (drain.h). */
    _Atomic pid_t handed_over;
};

_Static_assert(sizeof(struct drain_page) <= 4096, "the marks are a page long");

/* On the page every process writes at load (hot.h): the fork path reads
 * them.  PAGE is where this process's children are marked, mapped by
 * PAGE_OWNER: this process once it has forked; until then, in a forked
 * child, its parent (the child is marked there).  Once it has forked,
 * PARENTS_PAGE is where its parent marks it; PARENT is its parent then,
 * or from load, the one its image started under.  MAP_FAILED: the page
 * could not be mapped. */
SCL_HOT static _Atomic(struct drain_page *) page;
SCL_HOT static _Atomic pid_t page_owner;
SCL_HOT static _Atomic(struct drain_page *) parents_page;
SCL_HOT static _Atomic pid_t parent;
/* How many marks this process has set and not cleared: the fork and reap
 * paths look at the page only while there are some. */
SCL_HOT static atomic_uint nmarked;
SCL_HOT _Atomic uint64_t scl_drain_signals;
/* The process whose image started as a session leader (setsid(1),
 * systemd, start-stop-daemon): a master of its own, no daemon's middle
 * process. */
static _Atomic pid_t leader_from_start;

static int usable(const struct drain_page *p)
{
    return p != NULL && p != MAP_FAILED;
}

/* Whether process SELF leads its session: it left the one it started in
 * (setsid(), daemon(3), setsid(1), start-stop-daemon --background). */
static int leads_session(pid_t self)
{
    return scl_bound.syscall(SYS_getsid, 0) == self;
}

void scl_drain_at_load(pid_t self, pid_t master)
{
    const char *refused = scl_settings()->drain_signals_refused;

    atomic_store(&parent, master);
    if (leads_session(self))
        atomic_store(&leader_from_start, self);
    atomic_store(&scl_drain_signals, scl_settings()->drain_signals);
    if (refused != NULL)
        scl_debug("SWERVE_CLAIM_DRAIN_SIGNALS=%s names something that is no signal: HUP, INT, QUIT and TERM "
                  "tell a child to drain",
                  refused);
}

/* The children counted, and the last one's pid. */
struct brood {
    int n;
    pid_t last;
};

static void count_child(pid_t pid, void *arg)
{
    struct brood *b = arg;

    b->n++;
    b->last = pid;
}

void scl_drain_process_exits(void)
{
    pid_t self = getpid();
    struct drain_page *p = atomic_load(&page);
    struct brood b = { 0, 0 };

    /* Only the middle of a double fork: it called setsid() itself (a
     * master started as a session leader, by systemd say, is none), and
     * leaves one child.  A master that leaves several workers (php-cgi's
     * parent) drains them by its end, as any master does. */
    if (atomic_load(&page_owner) == self && usable(p) && atomic_load(&leader_from_start) != self &&
        leads_session(self) && scl_children_each(count_child, &b) == 0 && b.n == 1)
        atomic_store(&p->handed_over, b.last);
}

/* The page where this process's parent marks it, kept for this process
 * alone: a child that inherited it could write this process's pid there
 * (a worker telling its root master that it drains).  Its children map
 * it no more; their pointer to it stays, unread (they read the page of
 * their own parent, this process, until they fork themselves).  NULL
 * when it cannot be kept so: nobody can then tell this process by marks,
 * as before it forked. */
static struct drain_page *keep_for_self(struct drain_page *inherited)
{
    if (!usable(inherited))
        return inherited;
    /* Through the bound system call: the fork path binds nothing lazily. */
    if (scl_bound.syscall(SYS_madvise, inherited, sizeof *inherited, MADV_DONTFORK) == 0)
        return inherited;
    return NULL; /* left mapped (another thread may be reading it), and read no more */
}

void scl_drain_before_fork(pid_t self)
{
    struct drain_page *fresh;
    pid_t owner;
    int saved;

    if (atomic_load_explicit(&page_owner, memory_order_acquire) == self)
        return;
    saved = errno;
    /* Bound at load: the fork path binds nothing lazily (bound.h). */
    fresh = scl_bound.mmap(NULL, sizeof *fresh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    scl_lock();
    if ((owner = atomic_load(&page_owner)) != self) {
        /* What this process inherited, kept; then its own. */
        atomic_store(&parents_page, owner != 0 ? keep_for_self(atomic_load(&page)) : NULL);
        if (owner != 0)
            atomic_store(&parent, owner);
        atomic_store(&nmarked, 0);
        atomic_store(&page, fresh);
        /* The owner last: another thread's fork that finds it finds the
         * page too, and one that does not waits for this lock, so no child
         * is forked with the parent's page, which it no longer maps. */
        atomic_store_explicit(&page_owner, self, memory_order_release);
        fresh = NULL;
    }
    scl_unlock();
    if (usable(fresh))
        (void)scl_bound.munmap(fresh, sizeof *fresh); /* another thread's fork mapped one first */
    errno = saved;
}

static void unmark(struct drain_page *p, int slot)
{
    if (atomic_load(&p->marked[slot]) != 0 && atomic_exchange(&p->marked[slot], 0) != 0 && atomic_load(&nmarked) > 0)
        atomic_fetch_sub(&nmarked, 1);
}

void scl_drain_child_born(pid_t pid, int slot)
{
    struct drain_page *p = atomic_load(&page);

    if (slot < 0 || atomic_load(&nmarked) == 0 || !usable(p))
        return;
    /* A mark of its pid is a child's that was reaped unseen (SIGCHLD
     * ignored, a raw wait4); one in its slot, a child's that the table
     * dropped as gone. */
    for (int i = 0; i < SCL_CHILD_SLOTS; i++)
        if (i == slot || atomic_load(&p->marked[i]) == pid)
            unmark(p, i);
}

void scl_drain_child_gone(int slot)
{
    struct drain_page *p = atomic_load(&page);

    if (slot >= 0 && atomic_load(&nmarked) != 0 && usable(p))
        unmark(p, slot);
}

static void mark(struct drain_page *p, pid_t child)
{
    int slot = scl_children_slot(child);

    if (slot < 0)
        return;
    if (atomic_exchange(&p->marked[slot], child) == 0)
        atomic_fetch_add(&nmarked, 1);
    scl_store()->child_draining(child);
}

/* A process group (0: every process) and the page its members are marked
 * in. */
struct group {
    struct drain_page *page;
    pid_t pgrp;
};

static void mark_if_in_group(pid_t child, void *arg)
{
    const struct group *g = arg;

    /* Through the bound system call: nothing is bound lazily here. */
    if (g->pgrp == 0 || scl_bound.syscall(SYS_getpgid, child) == g->pgrp)
        mark(g->page, child);
}

/* A signal's target, as kill() names it, and the page where the
 * children it reached are marked. */
struct reached {
    struct drain_page *page;
    pid_t target;
};

/* On the own stack: marks the children R reached. */
static void mark_reached(void *arg)
{
    const struct reached *r = arg;
    struct group g = { r->page, r->target == -1 ? 0 : -r->target };

    if (r->target > 0) {
        mark(r->page, r->target);
        return;
    }
    if (r->target == 0)
        g.pgrp = (pid_t)scl_bound.syscall(SYS_getpgid, 0);
    (void)scl_children_each(mark_if_in_group, &g);
}

void scl_drain_sent(pid_t self, pid_t target)
{
    struct reached r = { atomic_load(&page), target };
    int saved = errno;

    /* Only a process that forked has children to mark.  The work (a look
     * for each child's page of times, a getpgid() each) runs on the own
     * stack: a master may signal from a handler on a small stack. */
    if (atomic_load_explicit(&page_owner, memory_order_acquire) == self && usable(r.page))
        scl_on_own_stack(mark_reached, &r);
    errno = saved;
}

/* Whether P marks process SELF: looked for from its pid's slot on, where
 * the table of children put it first. */
static int marked_in(struct drain_page *p, pid_t self)
{
    for (int n = 0, i = self % SCL_CHILD_SLOTS; n < SCL_CHILD_SLOTS; n++, i = (i + 1) % SCL_CHILD_SLOTS)
        if (atomic_load_explicit(&p->marked[i], memory_order_relaxed) == self)
            return 1;
    return 0;
}

int scl_drain_asked(void)
{
    pid_t self = getpid(), owner = atomic_load_explicit(&page_owner, memory_order_acquire);
    /* Where its parent marks it, and who that parent is: the page it
     * inherited and its mapper, or once it forked itself, the ones it kept
     * then (from load: the parent its image started under). */
    struct drain_page *p = owner == self ? atomic_load(&parents_page) : atomic_load(&page);
    pid_t forker = owner != 0 && owner != self ? owner : atomic_load(&parent);
    unsigned found = 0;

    if (usable(p) && marked_in(p, self))
        found |= SCL_DRAIN_SIGNALLED;
    if (scl_listeners_all_closed(self))
        found |= SCL_DRAIN_LISTENERS;
    /* Its parent gone, it was given to init or a subreaper: for good;
     * unless it detached from that parent (a session of its own), or the
     * parent, having called setsid() itself, exited with it as its one
     * child and so handed it over (the middle of a daemon's double fork). */
    if (forker > 0 && getppid() != forker && !(usable(p) && atomic_load(&p->handed_over) == self) &&
        !leads_session(self))
        found |= SCL_DRAIN_ORPHANED;
    found |= scl_store()->drain_told(self, found);
    if (found != 0)
        return 1;
    if (p == MAP_FAILED) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}
