#include "config.h"

#include "api.h"
#include "children.h"
#include "holder.h"
#include "hot.h"
#include "lifecycle.h"
#include "fork_page.h"
#include "log.h"
#include "proc.h"
#include "real.h"
#include "dir.h"
#include "settings.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

SCL_HOT static atomic_int initialised;
/* The parent this process had when its image started (set at load), or
 * itself once it forks: so a child knows its parent without writing
 * anything on its side of the fork (fork_page.h says why that matters), and
 * an orphan notices it is one. */
SCL_HOT static _Atomic pid_t forking_parent;
SCL_HOT static _Atomic pid_t ended_pid;

/*
 * Before every fork, hooked or libc-internal (daemon(3)): the claim
 * directory must exist in the parent so that all its children share it,
 * and the parent becomes a member of it.  Once it is, this writes
 * nothing: a server forking its workers pays a few loads.
 */
static void before_fork(void)
{
    pid_t self = getpid();
    int saved = errno;

    if (atomic_load(&forking_parent) != self)
        atomic_store(&forking_parent, self);
    if (!scl_dir_is_member(self)) {
        scl_lock();
        if (scl_dir_join_locked() < 0)
            scl_debug("no claim directory before fork: errno %d", errno);
        scl_unlock();
    }
    errno = saved;
}

/* Only async-signal-safe work here: the parent may have had threads. */
static void after_fork_in_child(void)
{
    scl_lock_reset_in_child();
}

void scl_lifecycle_init(void)
{
    int expected = 0;

    if (atomic_load_explicit(&initialised, memory_order_acquire) == 2)
        return;
    if (!atomic_compare_exchange_strong(&initialised, &expected, 1))
        return; /* another thread, or the code this signal interrupted, is at it */
    (void)scl_real();
    /* Calling getppid() here also binds it in the parent: a child that
     * binds a PLT slot itself writes a page it shares with its parent. */
    atomic_store(&forking_parent, getppid());
    scl_dir_attach_later();
    if (pthread_atfork(before_fork, NULL, after_fork_in_child) != 0)
        scl_debug("pthread_atfork failed: claims will not be shared by children");
    atomic_store_explicit(&initialised, 2, memory_order_release);
}

void scl_forked(pid_t child)
{
    scl_children_add(child);
}

void scl_child_reaped(pid_t child)
{
    int dirfd;

    scl_children_remove(child);
    if (!scl_dir_in_use() || (dirfd = scl_dir_claims_fd()) < 0)
        return;
    /* One failed openat() for a child that never claimed: no scan. */
    if (scl_holder_clear(dirfd, child, SCL_CLEAR_IF_DEAD) < 0)
        scl_debug("could not clear the claims of child %d: errno %d", (int)child, errno);
}

void scl_process_execs(void)
{
    pid_t self = getpid();
    int saved, dirfd;

    /* Only a member can hold anything; the others touch nothing here, not
     * even errno (a fork+exec child shares its pages with its parent). */
    if (!scl_dir_is_member(self))
        return;
    saved = errno;
    if ((dirfd = scl_dir_claims_fd()) >= 0)
        (void)scl_holder_clear(dirfd, self, SCL_CLEAR_CLAIMS_ONLY);
    scl_api_forget_claims();
    errno = saved;
}

/* Registers a live child as a member, so the directory outlives us. */
static void hand_over(pid_t child, void *arg)
{
    int dirfd = *(int *)arg;
    struct scl_proc_stat st;
    struct scl_proc_id id = { .pid = child, .start = 0 };

    if (scl_proc_read_stat(child, &st) == 0) {
        if (st.state == 'Z' || st.state == 'X' || st.ppid != getpid())
            return;
        id.start = st.start;
    } else if (!scl_proc_alive(&id)) {
        return;
    }
    if (scl_holder_register(dirfd, &id, 0) != 0)
        scl_debug("could not hand the claim directory to child %d: errno %d", (int)child, errno);
}

void scl_process_ending(void)
{
    pid_t self = getpid();
    int saved = errno, dirfd, member;

    if (!scl_dir_in_use())
        goto out;
    member = scl_dir_is_member(self);
    /* The common case, a worker that never claimed anything and whose
     * parent still runs, costs two system calls, no file work and no
     * write to memory it shares with its parent. */
    if (!member && getppid() == atomic_load(&forking_parent))
        goto out;
    if (atomic_exchange(&ended_pid, self) == self)
        goto out;
    dirfd = scl_dir_claims_fd();
    /* An orphan may have been registered by its parent as that ended. */
    if (dirfd < 0 || (!member && !scl_dir_has_holder(dirfd, self)))
        goto out;
    if (scl_children_each(hand_over, &dirfd) != 0)
        scl_dir_leave(dirfd, 0); /* some children went unrecorded: keep the directory */
    else
        scl_dir_leave(dirfd, 1);
out:
    errno = saved;
}

__attribute__((constructor)) static void on_load(void)
{
    int saved = errno;

    scl_lifecycle_init();
    errno = saved;
}

/* exit() and returning from main() end here: libc calls exit internally,
 * where no PLT hook sees it, and the destructor runs after the host's own
 * atexit handlers, which may still use claims. */
__attribute__((destructor)) static void on_unload(void)
{
    scl_process_ending();
}
