#include "config.h"

#include "holder.h"
#include "lock.h"
#include "serverdir.h"
#include "sigsafe.h"
#include "store.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
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
 * request.  Open addressing on the file names; guarded by scl_lock().
 */
static struct {
    char **slots;
    size_t cap, used;
    pid_t pid;
    unsigned gen;
} journaled;

static size_t hash(const char *s)
{
    size_t h = 14695981039346656037ULL;

    while (*s != '\0')
        h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
    return h;
}

static void journaled_reset(pid_t pid, unsigned gen)
{
    for (size_t i = 0; i < journaled.cap; i++)
        free(journaled.slots[i]);
    free(journaled.slots);
    journaled.slots = NULL;
    journaled.cap = journaled.used = 0;
    journaled.pid = pid;
    journaled.gen = gen;
}

/* The slot that holds FNAME, or the empty one where it belongs. */
static char **journaled_slot(const char *fname)
{
    size_t i = hash(fname) & (journaled.cap - 1);

    while (journaled.slots[i] != NULL && strcmp(journaled.slots[i], fname) != 0)
        i = (i + 1) & (journaled.cap - 1);
    return &journaled.slots[i];
}

static int journaled_grow(void)
{
    char **old = journaled.slots;
    size_t old_cap = journaled.cap, cap = old_cap == 0 ? 16 : old_cap * 2;
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

/* Write-ahead: the name goes into the journal before the link exists, so
 * whoever clears this process later finds every claim it may hold. */
static int journal_once_locked(int dirfd, struct scl_key *key)
{
    pid_t self = getpid();
    unsigned gen = scl_dir_generation();
    char **slot;

    if (journaled.pid != self || journaled.gen != gen)
        journaled_reset(self, gen);
    if ((journaled.used + 1) * 2 > journaled.cap && journaled_grow() != 0)
        return -1;
    slot = journaled_slot(key->fname);
    if (*slot == NULL) {
        char *copy = strdup(key->fname);
        if (copy == NULL)
            return -1;
        if (scl_holder_journal(dirfd, self, key->journal_line, key->journal_len) != 0) {
            free(copy);
            return -1;
        }
        *slot = copy;
        journaled.used++;
    }
    key->journaled_pid = self;
    key->journaled_gen = gen;
    return 0;
}

/* The directory, with this process registered and KEY journaled. */
static int ready_for(struct scl_key *key)
{
    int dirfd = scl_dir_fd_if_member();

    if (dirfd >= 0 && key->journaled_pid == getpid() && key->journaled_gen == scl_dir_generation())
        return dirfd;
    scl_lock();
    dirfd = scl_dir_join_locked();
    if (dirfd >= 0 && journal_once_locked(dirfd, key) != 0)
        dirfd = -1;
    {
        int saved = errno;
        scl_unlock();
        errno = saved;
    }
    return dirfd;
}

static int fs_try_acquire(struct scl_key *key)
{
    char holder[SCL_REL_PATH_MAX], claim[SCL_REL_PATH_MAX];
    int dirfd = ready_for(key);

    if (dirfd < 0)
        return -1;
    scl_holder_path(holder, getpid());
    scl_claim_path(claim, key->fname);
    for (int attempt = 0; attempt < BUSY_RETRIES; attempt++) {
        /* The one atomic step: it fails while anybody holds the name. */
        if (linkat(dirfd, holder, dirfd, claim, 0) == 0)
            return 0;
        if (errno != EEXIST)
            return -1;
        switch (scl_claim_clear_if_stale(dirfd, key->fname)) {
        case SCL_CLAIM_FREE:
            continue;
        case SCL_CLAIM_LIVE:
            errno = EWOULDBLOCK;
            return -1;
        case SCL_CLAIM_BUSY:
            sched_yield();
            continue;
        case SCL_CLAIM_ERROR:
            return -1;
        }
    }
    errno = EWOULDBLOCK;
    return -1;
}

static int fs_release(struct scl_key *key)
{
    char claim[SCL_REL_PATH_MAX];
    int dirfd = scl_dir_fd();

    if (dirfd < 0)
        return errno == ENOENT ? 0 : -1; /* the directory and its claims are gone */
    scl_claim_path(claim, key->fname);
    if (unlinkat(dirfd, claim, 0) != 0 && errno != ENOENT)
        return -1;
    return 0;
}

static int fs_available(const struct scl_key *key)
{
    struct scl_proc_id id;
    int dirfd;

    if (!scl_dir_in_use())
        return 1; /* no directory yet: nothing is claimed */
    dirfd = scl_dir_fd();
    if (dirfd < 0)
        return errno == ENOENT ? 1 : -1;
    if (scl_claim_holder(dirfd, key->fname, &id) != 0) {
        if (errno == ENOENT)
            return 1;
        return errno == EINVAL ? 0 : -1; /* a file we cannot read is somebody's */
    }
    return !scl_proc_alive(&id);
}

/*
 * Waiting: an inotify watch on the current holder's file.  Unlinking a
 * claim drops its link count, which raises IN_ATTRIB on that inode: only
 * the waiters of that holder wake, not every waiter in the server, as a
 * watch on the claims directory would.
 */
struct scl_waiter {
    int fd;
    int wd;
};

static struct scl_waiter *fs_waiter_new(void)
{
    struct scl_waiter *w = malloc(sizeof *w);

    if (w == NULL)
        return NULL;
    w->fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    w->wd = -1;
    if (w->fd < 0) { /* out of inotify instances: poll */
        free(w);
        return NULL;
    }
    return w;
}

static void fs_waiter_arm(struct scl_waiter *w, const struct scl_key *key)
{
    char path[PATH_MAX];
    int wd;

    if (w == NULL || scl_concat(path, sizeof path, scl_dir_path(), "/" SCL_CLAIMS_DIR "/",
                                key->fname, (char *)NULL) != 0)
        return;
    wd = inotify_add_watch(w->fd, path, IN_ATTRIB | IN_DELETE_SELF | IN_DONT_FOLLOW);
    if (wd < 0)
        return; /* no holder now, or no watch: the caller retries anyway */
    if (w->wd >= 0 && w->wd != wd)
        (void)inotify_rm_watch(w->fd, w->wd); /* the name has a new holder */
    w->wd = wd;
}

static void fs_waiter_sleep(struct scl_waiter *w, const struct timespec *rel)
{
    char events[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    struct pollfd pfd;

    if (w == NULL) {
        (void)nanosleep(rel, NULL);
        return;
    }
    pfd.fd = w->fd;
    pfd.events = POLLIN;
    if (ppoll(&pfd, 1, rel, NULL) > 0)
        while (read(w->fd, events, sizeof events) > 0)
            ;
}

static void fs_waiter_free(struct scl_waiter *w)
{
    if (w == NULL)
        return;
    scl_close_quietly(w->fd);
    free(w);
}

const struct scl_store_ops scl_store_fs = {
    .key_init = fs_key_init,
    .key_fini = fs_key_fini,
    .try_acquire = fs_try_acquire,
    .release = fs_release,
    .available = fs_available,
    .waiter_new = fs_waiter_new,
    .waiter_arm = fs_waiter_arm,
    .waiter_sleep = fs_waiter_sleep,
    .waiter_free = fs_waiter_free,
};
