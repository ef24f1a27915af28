#include "config.h"

#include "claim.h"
#include "holder.h"
#include "fork_page.h"
#include "dir.h"
#include "sigsafe.h"
#include "store.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How often try_acquire() retries while another process is busy clearing
 * a dead holder of the name (it takes microseconds). */
#define BUSY_RETRIES 64

static int fs_key_init(struct scl_key *key, const char *name, size_t len)
{
    size_t flen = scl_name_encode(name, len, key->fname);

    /* A hashed name's journal line also carries the whole name, so that
     * tools can show what the application wrote. */
    key->journal_len = flen + 1 + (scl_name_is_hashed(key->fname) ? 1 + 3 * len : 0);
    key->journal_line = malloc(key->journal_len + 1);
    if (key->journal_line == NULL)
        return -1;
    memcpy(key->journal_line, key->fname, flen);
    if (scl_name_is_hashed(key->fname)) {
        key->journal_line[flen] = '\t';
        flen += 1 + scl_name_encode_full(name, len, key->journal_line + flen + 1);
    }
    key->journal_line[flen] = '\n';
    key->journal_len = flen + 1;
    key->journaled_pid = 0;
    key->journaled_gen = 0;
    return 0;
}

static void fs_key_fini(struct scl_key *key)
{
    free(key->journal_line);
    key->journal_line = NULL;
}

/*
 * The file names this process has journaled in its holder file, so that
 * a worker making a new handle per request does not grow its journal per
 * request.  Guarded by scl_lock().
 *
 * The first names live in static storage: a child of a multithreaded
 * fork may take claims through handles made before the fork, and must not
 * allocate to do so (another thread of its parent may have held the
 * allocator's lock).  For the same reason a child abandons its parent's
 * table rather than free it.  Past the static slots, an open-addressing
 * table on the heap.
 */
#define STATIC_NAMES 64

static struct {
    char first[STATIC_NAMES][SCL_FNAME_MAX];
    size_t first_used;
    char **slots; /* the heap table, a power of two in size */
    size_t cap, used;
    pid_t pid;
    unsigned gen;
} journaled;

static void journaled_reset(pid_t pid, unsigned gen)
{
    if (journaled.pid == pid) { /* this process's own table: a new directory */
        for (size_t i = 0; i < journaled.cap; i++)
            free(journaled.slots[i]);
        free(journaled.slots);
    } /* else a forked child: the parent's table is abandoned, not freed */
    journaled.slots = NULL;
    journaled.cap = journaled.used = journaled.first_used = 0;
    journaled.pid = pid;
    journaled.gen = gen;
}

/* The heap slot that holds FNAME, or the empty one where it belongs. */
static char **journaled_slot(const char *fname)
{
    size_t i = scl_name_hash(fname) & (journaled.cap - 1);

    while (journaled.slots[i] != NULL && strcmp(journaled.slots[i], fname) != 0)
        i = (i + 1) & (journaled.cap - 1);
    return &journaled.slots[i];
}

static int journaled_grow(void)
{
    char **old = journaled.slots;
    size_t old_cap = journaled.cap, cap = old_cap == 0 ? 64 : old_cap * 2;
    char **slots = calloc(cap, sizeof *slots);

    if (slots == NULL)
        return -1;
    journaled.slots = slots;
    journaled.cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i] != NULL)
            *journaled_slot(old[i]) = old[i];
    free(old);
    return 0;
}

static int journaled_has(const char *fname)
{
    for (size_t i = 0; i < journaled.first_used; i++)
        if (strcmp(journaled.first[i], fname) == 0)
            return 1;
    return journaled.cap != 0 && *journaled_slot(fname) != NULL;
}

static int journaled_add(const char *fname)
{
    char *copy;

    if (journaled.first_used < STATIC_NAMES) {
        strcpy(journaled.first[journaled.first_used++], fname);
        return 0;
    }
    if ((journaled.used + 1) * 2 > journaled.cap && journaled_grow() != 0)
        return -1;
    copy = strdup(fname);
    if (copy == NULL)
        return -1;
    *journaled_slot(fname) = copy;
    journaled.used++;
    return 0;
}

/* Write-ahead: the name goes into the journal before the link exists, so
 * whoever clears this process later finds every claim it may hold. */
static int journal_once_locked(int dirfd, struct scl_key *key, pid_t self)
{
    unsigned gen = scl_dir_generation();

    if (journaled.pid != self || journaled.gen != gen)
        journaled_reset(self, gen);
    if (!journaled_has(key->fname)) {
        if (scl_holder_journal(dirfd, self, key->journal_line, key->journal_len) != 0 || journaled_add(key->fname) != 0)
            return -1;
    }
    key->journaled_pid = self;
    key->journaled_gen = gen;
    return 0;
}

/* The claims directory, with SELF registered and KEY journaled. */
static int ready_for(struct scl_key *key, pid_t self)
{
    int dirfd = scl_dir_claims_fd_if_member(self);

    if (dirfd >= 0 && key->journaled_pid == self && key->journaled_gen == scl_dir_generation())
        return dirfd;
    scl_lock();
    dirfd = scl_dir_join_locked();
    if (dirfd >= 0)
        scl_wake_map(dirfd, scl_dir_generation());
    if (dirfd >= 0 && journal_once_locked(dirfd, key, self) != 0)
        dirfd = -1;
    {
        int saved = errno;
        scl_unlock();
        errno = saved;
    }
    return dirfd;
}

static int fs_try_acquire(struct scl_key *key, pid_t self)
{
    char holder[SCL_FNAME_MAX];
    int dirfd = ready_for(key, self);

    if (dirfd < 0)
        return -1;
    scl_holder_path(holder, self);
    for (int attempt = 0; attempt < BUSY_RETRIES; attempt++) {
        /* The one atomic step: it fails while anybody holds the name. */
        if (linkat(dirfd, holder, dirfd, key->fname, 0) == 0) {
            key->revocations_known = scl_wake_revocations(&key->revocations) == 0;
            return 0;
        }
        if (errno != EEXIST)
            return -1;
        switch (scl_claim_clear_if_stale(dirfd, key->fname)) {
        case SCL_CLAIM_FREE: continue;
        case SCL_CLAIM_LIVE: errno = EWOULDBLOCK; return -1;
        case SCL_CLAIM_BUSY: sched_yield(); continue;
        case SCL_CLAIM_ERROR: return -1;
        }
    }
    errno = EWOULDBLOCK;
    return -1;
}

static int fs_release(struct scl_key *key)
{
    unsigned now;
    int dirfd;

    /* Nobody forced a release in this directory since we took the name
     * there: it is still ours, and one unlink gives it up. */
    if (key->revocations_known && key->journaled_gen == scl_dir_generation() && scl_wake_revocations(&now) == 0 &&
        now == key->revocations) {
        dirfd = scl_dir_claims_fd();
        if (dirfd < 0)
            return errno == ENOENT ? 0 : -1; /* the directory and its claims are gone */
        if (unlinkat(dirfd, key->fname, 0) != 0)
            return errno == ENOENT ? 0 : -1;
        scl_wake(key->fname);
        return 0;
    }
    /* Otherwise only while it still links to our holder file: release
     * --force may have given it to somebody else. */
    if (scl_dir_remove_own_claim(key->fname) != 0)
        return errno == ENOENT || errno == ESTALE ? 0 : -1;
    return 0;
}

static int fs_available(const struct scl_key *key)
{
    struct scl_proc_id id;
    int dirfd;

    if (!scl_dir_in_use())
        return 1; /* no directory yet: nothing is claimed */
    dirfd = scl_dir_claims_fd();
    if (dirfd < 0)
        return errno == ENOENT ? 1 : -1;
    if (scl_claim_holder(dirfd, key->fname, &id) != 0) {
        if (errno == ENOENT)
            return 1;
        return errno == EINVAL ? 0 : -1; /* a file we cannot read is somebody's */
    }
    return !scl_proc_alive(&id);
}

static void fs_wait_enter(struct scl_wait *w, const struct scl_key *key)
{
    (void)scl_wake_enter(&w->ticket, key->fname);
}

static void fs_wait_arm(struct scl_wait *w)
{
    scl_wake_arm(&w->ticket);
}

static void fs_wait_sleep(struct scl_wait *w, const struct timespec *rel)
{
    scl_wake_sleep(&w->ticket, rel);
}

static void fs_wait_leave(struct scl_wait *w)
{
    scl_wake_leave(&w->ticket);
}

const struct scl_store_ops scl_store_fs = {
    .key_init = fs_key_init,
    .key_fini = fs_key_fini,
    .try_acquire = fs_try_acquire,
    .release = fs_release,
    .available = fs_available,
    .wait_enter = fs_wait_enter,
    .wait_arm = fs_wait_arm,
    .wait_sleep = fs_wait_sleep,
    .wait_leave = fs_wait_leave,
};
