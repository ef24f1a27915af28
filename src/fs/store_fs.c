/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "acl.h"
#include "claim.h"
#include "dir.h"
#include "fork_page.h"
#include "history.h"
#include "holder.h"
#include "journaled.h"
#include "kept_fds.h"
#include "log.h"
#include "member.h"
#include "own_stack.h"
#include "proc.h"
#include "settings.h"
#include "sigsafe.h"
#include "store.h"
#include "times.h"
#include "wake.h"
#include "watch.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How often try_acquire() retries while another process is busy clearing
 * a dead holder of the name (it takes microseconds). */
#define BUSY_RETRIES 64

/*
 * Whether a holder is alive takes reading its file and its /proc entry
 * (a dozen system calls), and applications ask on every request, of a
 * name that is usually held.  So a handle remembers the holder it last
 * found alive, for one retry period (the documentation's own cadence):
 * while the claim is still that inode, it is that live holder's, for one
 * fstatat.  A holder whose claim was cleared (its reaper under the shim,
 * anybody's acquire) is nobody at once; one that ended with nobody to
 * clear it, within the period.  This only ever answers "held": taking a
 * name is always the link itself.
 */
struct seen_live {
    dev_t dev; /* the claim's inode (its holder file's) */
    ino_t ino;
    int64_t until; /* trusted until then (monotonic), 0: nothing remembered */
};

/* The retry period of the Swerve documentation's Claim: a waiter tries
 * again at least this often, even when no wake-up comes (a holder that
 * died and was never reaped). */
#define RETRY_NS (20 * 1000 * 1000LL)

/* A claim name as this store knows it. */
struct scl_key {
    char fname[SCL_FNAME_MAX]; /* the name's file name (names.h) */
    size_t hash;               /* scl_name_hash(fname): its slot in wake */
    char *journal_line;        /* what the holder's journal records */
    size_t journal_len;
    pid_t journaled_pid;                 /* the process, and directory generation, */
    unsigned journaled_gen;              /* that journaled it already */
    int revocations_known;               /* when the name was taken: 1 and the count */
    unsigned revocations;                /* of forced releases (wake.h), or 0 */
    uint64_t token;                      /* this hold's fencing token */
    int times_entry;                     /* its entry in the journaling process's times page */
    uint64_t history_hash;               /* scl_times_hash(fname): the name in pages of times and history */
    int history_slot;                    /* its slot in the journaling process's history */
    int history_record;                  /* this hold's record there, or -1 */
    struct seen_live seen;               /* the holder this handle last found alive */
    char watch_name[SCL_WATCH_NAME_MAX]; /* its waiters' FIFO (watch.h) */
    struct scl_watch watch;              /* an event loop's wait (wait_fd) */
    pid_t watch_shown_by;                /* the process whose page of times says so */
    pid_t watch_counted_by;              /* the process counted in its wake slot, */
    unsigned watch_counted_gen;          /* in the wake file of that generation */
};

static struct scl_key *fs_key_new(const char *name, size_t len)
{
    struct scl_key *key = calloc(1, sizeof *key);
    size_t flen;

    if (key == NULL)
        return NULL;
    flen = scl_name_encode(name, len, key->fname);
    key->hash = scl_name_hash(key->fname);
    key->history_hash = scl_times_hash(key->fname);
    key->history_record = -1;
    scl_watch_name(key->fname, key->watch_name);
    key->watch = (struct scl_watch)SCL_WATCH_NONE;

    /* A hashed name's journal line also carries the whole name, so that
     * tools can show what the application wrote. */
    key->journal_len = flen + 1 + (scl_name_is_hashed(key->fname) ? 1 + 3 * len : 0);
    key->journal_line = malloc(key->journal_len + 1);
    if (key->journal_line == NULL) {
        free(key);
        return NULL;
    }
    memcpy(key->journal_line, key->fname, flen);
    if (scl_name_is_hashed(key->fname)) {
        key->journal_line[flen] = '\t';
        flen += 1 + scl_name_encode_full(name, len, key->journal_line + flen + 1);
    }
    key->journal_line[flen] = '\n';
    key->journal_len = flen + 1;
    return key;
}

static void fs_wait_end(struct scl_key *key);

static void fs_key_free(struct scl_key *key)
{
    fs_wait_end(key);
    free(key->journal_line);
    free(key);
}

/* Under scl_lock(): notes this process's command line on its holder
 * file, open as FD, for list, and for its records, for history. */
static void note_command(int fd, pid_t self)
{
    static char command[512]; /* under the lock, off the stack */
    ssize_t n = scl_proc_read_cmdline(0, command, sizeof command);

    if (n > 0) {
        scl_holder_note_command(fd, command, (size_t)n);
        scl_history_set_command(self, command);
    }
}

/* Write-ahead: the name goes into the journal before the link exists, so
 * whoever clears this process later finds every claim it may hold. */
static int journal_once_locked(int claims_fd, struct scl_key *key, pid_t self)
{
    unsigned gen = scl_dir_generation();

    scl_journaled_for(self, gen);
    if (!scl_journaled_has(key->fname)) {
        struct stat st;
        int fd = scl_member_open_own_holder(claims_fd, O_WRONLY | O_APPEND, &st), r;
        if (fd < 0)
            return -1;
        r = scl_holder_journal(fd, &st, key->journal_line, key->journal_len);
        if (r == 0) /* once per new name: off the hot path of a name taken again */
            note_command(fd, self);
        scl_close_quietly(fd);
        if (r != 0 || scl_journaled_add(key->fname) != 0)
            return -1;
    }
    if (!scl_times_tried(self, gen))
        scl_times_map(scl_dir_top_fd(), self, gen);
    key->times_entry = scl_times_entry(key->fname, self, gen);
    key->history_slot = scl_history_slot(key->fname, key->history_hash);
    key->journaled_pid = self;
    key->journaled_gen = gen;
    return 0;
}

/* The claims directory, with SELF registered and KEY journaled: its
 * trusted descriptor (dir.h) when TRUSTED, else its checked one. */
static int ready_for(struct scl_key *key, pid_t self, int trusted)
{
    int claims_fd = -1;

    if (scl_dir_is_member(self) && key->journaled_pid == self && key->journaled_gen == scl_dir_generation())
        claims_fd = trusted ? scl_dir_claims_fd_trusted() : scl_dir_claims_fd();
    if (claims_fd >= 0)
        return claims_fd;
    scl_kept_fds_prepare();
    scl_lock();
    claims_fd = scl_dir_join_locked();
    if (claims_fd >= 0 && !scl_wake_is_mapped(scl_dir_generation()))
        scl_wake_map(scl_dir_top_fd(), scl_dir_generation());
    if (claims_fd >= 0 && journal_once_locked(claims_fd, key, self) != 0)
        claims_fd = -1;
    {
        int saved = errno;
        scl_unlock();
        errno = saved;
    }
    return claims_fd;
}

/*
 * A fencing token: the monotonic clock in nanoseconds, read once the link
 * is made.  The previous hold's token was read before that hold ended (a
 * release, or the holder's death), which came before this link could be
 * made: so every token is greater than the last, and costs no system call
 * (vDSO).  A claim directory never outlives the boot the clock counts from.
 */
static uint64_t now_token(void)
{
    return (uint64_t)scl_monotonic_ns();
}

/* Remembers that the claim of KEY, whose inode is ST's, was just found to
 * be a live holder's. */
static void remember_live(struct scl_key *key, const struct stat *st)
{
    key->seen.dev = st->st_dev;
    key->seen.ino = st->st_ino;
    key->seen.until = scl_monotonic_ns() + RETRY_NS;
}

/* 1 when KEY's claim in CLAIMS_FD is still the one it last found a live
 * holder's (struct seen_live), else 0; errno kept.  Another inode there,
 * or the period over, forgets that holder.  A name found free does not:
 * on a hot name the same holder takes it again and again, and its claim
 * is then the same inode (its holder file), while it lives. */
static int still_seen_live(struct scl_key *key, int claims_fd)
{
    struct stat st;
    int saved = errno, live;

    if (key->seen.until == 0)
        return 0;
    if (scl_monotonic_ns() >= key->seen.until) {
        key->seen.until = 0;
        return 0;
    }
    if (fstatat(claims_fd, key->fname, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        errno = saved;
        return 0;
    }
    live = st.st_dev == key->seen.dev && st.st_ino == key->seen.ino;
    if (!live)
        key->seen.until = 0;
    return live;
}

static int hold_begins(struct scl_key *key, pid_t self)
{
    key->seen.until = 0; /* its next try would only look at its own claim */
    key->revocations_known = scl_wake_revocations(&key->revocations) == 0;
    key->token = now_token();
    scl_times_taken(key->times_entry, self, (int64_t)key->token);
    key->history_record =
        scl_history_taken(key->history_slot, key->fname, key->history_hash, self, (int64_t)key->token);
    return 0;
}

/* The one atomic step, HOLDER linked as KEY's claim in CLAIMS_FD: it fails
 * while anybody holds the name.  Unless this thread has to keep off the
 * name while others wait for it (EWOULDBLOCK; turns, wake.h). */
static int link_claim(struct scl_key *key, int claims_fd, const char *holder, struct scl_turn *turn, int waiting)
{
    if (!scl_wake_may_take(key->hash, turn, waiting)) {
        errno = EWOULDBLOCK;
        return -1;
    }
    if (linkat(claims_fd, holder, claims_fd, key->fname, 0) != 0)
        return -1;
    scl_wake_taken(key->hash, turn, waiting);
    return 0;
}

/* One try for process SELF, by the thread whose place in the name's turns
 * is TURN (WAITING: among the name's waiters, fs_acquire_wait()). */
static int try_acquire(struct scl_key *key, pid_t self, struct scl_turn *turn, int waiting)
{
    char holder[SCL_PID_NAME_MAX];
    struct scl_proc_id seen;
    struct stat st;
    int claims_fd = scl_dir_claims_fd_unchecked(), trusted_fd, linked;

    /* Only "held" comes from the unchecked descriptor: a link through it
     * could land in a directory the host put at its number, where anyone
     * who can write there may have planted our holder file's name. */
    if (claims_fd >= 0 && still_seen_live(key, claims_fd)) {
        errno = EWOULDBLOCK;
        return -1;
    }
    if ((trusted_fd = ready_for(key, self, 1)) < 0)
        return -1;
    claims_fd = trusted_fd;
    scl_holder_path(holder, self);
    if (link_claim(key, claims_fd, holder, turn, waiting) == 0)
        return hold_begins(key, self);
    if (errno == EWOULDBLOCK)
        return -1;
    /* Any answer is asked again of the checked descriptor: the trusted
     * one may be the host's now (kept_fds.h), or a removed directory's
     * (ENOENT), which joining replaces.  An EEXIST it confirms stands. */
    linked = errno;
    if ((claims_fd = ready_for(key, self, 0)) < 0)
        return -1;
    for (int attempt = 0; attempt < BUSY_RETRIES; attempt++, linked = 0) {
        if (linked != EEXIST || claims_fd != trusted_fd) {
            if (link_claim(key, claims_fd, holder, turn, waiting) == 0)
                return hold_begins(key, self);
            if (errno != EEXIST)
                return -1;
        }
        /* Taken again, in between, by the live holder seen last. */
        if (still_seen_live(key, claims_fd)) {
            errno = EWOULDBLOCK;
            return -1;
        }
        switch (scl_claim_clear_if_stale(claims_fd, scl_dir_top_fd, key->fname, &seen, &st)) {
        case SCL_CLAIM_FREE: continue;
        case SCL_CLAIM_LIVE:
            if (seen.pid != 0) /* its header was read: a holder's file */
                remember_live(key, &st);
            errno = EWOULDBLOCK;
            return -1;
        case SCL_CLAIM_BUSY: sched_yield(); continue;
        case SCL_CLAIM_ERROR: return -1;
        }
    }
    errno = EWOULDBLOCK;
    return -1;
}

static int fs_try_acquire(struct scl_key *key, pid_t self, int64_t deadline)
{
    struct scl_turn turn = { 0, 0 };

    (void)deadline; /* a try here is a few system calls, none of them waits */
    /* An event loop's waiter takes its wake-ups before it tries: one that
     * comes after the try wakes it again. */
    if (scl_watch_consume(&key->watch, self))
        key->seen.until = 0; /* the holder it remembers has ended */
    return try_acquire(key, self, &turn, 0);
}

/* The hold of KEY ended with its release: recorded with plain stores. */
static int released(struct scl_key *key)
{
    scl_history_released(key->history_record, key->history_hash, key->journaled_pid, (int64_t)key->token);
    key->history_record = -1;
    return 0;
}

static int fs_release(struct scl_key *key)
{
    unsigned now;
    int claims_fd;

    /* Nobody forced a release in this directory since we took the name
     * there: it is still ours, and one unlink gives it up. */
    if (key->revocations_known && key->journaled_gen == scl_dir_generation() && scl_wake_revocations(&now) == 0 &&
        now == key->revocations) {
        claims_fd = scl_dir_claims_fd_trusted();
        /* A failure is asked again of the checked descriptor, as in
         * fs_try_acquire(). */
        if (claims_fd < 0 || unlinkat(claims_fd, key->fname, 0) != 0) {
            claims_fd = scl_dir_claims_fd();
            if (claims_fd < 0)
                return errno == ENOENT ? 0 : -1; /* the directory and its claims are gone */
            if (unlinkat(claims_fd, key->fname, 0) != 0)
                return errno == ENOENT ? 0 : -1;
        }
        scl_wake_released(key->hash);
        if (scl_wake_may_be_watched(key->hash))
            scl_watch_notify(claims_fd, key->watch_name);
        return released(key);
    }
    /* Otherwise only while it still links to our holder file: release
     * --force may have given it to somebody else. */
    claims_fd = scl_dir_claims_fd();
    if (claims_fd < 0 || scl_member_remove_own_claim(claims_fd, key->fname) != 0)
        return errno == ENOENT || errno == ESTALE ? 0 : -1;
    return released(key);
}

static int fs_available(struct scl_key *key)
{
    struct scl_proc_id id;
    struct stat st;
    int claims_fd;

    if (!scl_dir_in_use())
        return 1; /* no directory yet: nothing is claimed */
    claims_fd = scl_dir_claims_fd_unchecked();
    if (claims_fd >= 0 && still_seen_live(key, claims_fd))
        return 0;
    claims_fd = scl_dir_claims_fd();
    if (claims_fd < 0)
        return errno == ENOENT ? 1 : -1;
    if (scl_claim_holder(claims_fd, key->fname, &id, &st) != 0) {
        if (errno == ENOENT)
            return 1;
        return errno == EINVAL ? 0 : -1; /* a file we cannot read is somebody's */
    }
    if (!scl_proc_alive(&id))
        return 1;
    remember_live(key, &st);
    return 0;
}

static uint64_t fs_token(const struct scl_key *key)
{
    return key->token;
}

static int fs_acquire_wait(struct scl_key *key, pid_t self, int64_t deadline)
{
    struct scl_wake_ticket ticket;
    int failed = 0, waiting = 0;

    /* The directory first: the first claim of a worker may make it, and
     * map the wake file the ticket is in.  EBUSY (another thread is
     * opening it) is waited out below. */
    if (ready_for(key, self, 1) < 0 && errno != EBUSY)
        return -1;
    (void)scl_wake_enter(&ticket, key->hash, scl_proc_self_tid());
    for (;;) {
        int64_t left = deadline < 0 ? RETRY_NS : deadline - scl_monotonic_ns();
        struct timespec rel;

        /* Arm first, then try: a release between the two still wakes us. */
        scl_wake_arm(&ticket);
        if (try_acquire(key, self, &ticket.turn, 1) == 0)
            break;
        if ((errno != EWOULDBLOCK && errno != EBUSY) || left <= 0) {
            failed = errno == EWOULDBLOCK ? ETIMEDOUT : errno;
            break;
        }
        if (!waiting) { /* shown by the tools; a plain try never gets here */
            scl_times_waiting(key->fname, self);
            waiting = 1;
        }
        if (left > RETRY_NS)
            left = RETRY_NS;
        rel.tv_sec = (time_t)(left / 1000000000LL);
        rel.tv_nsec = (long)(left % 1000000000LL);
        scl_wake_sleep(&ticket, &rel); /* a signal only shortens a round */
    }
    if (waiting)
        scl_times_done_waiting(key->fname, self);
    scl_wake_leave(&ticket, failed == 0);
    if (failed == 0)
        return 0;
    errno = failed;
    return -1;
}

static int fs_wait_fd(struct scl_key *key, pid_t self)
{
    struct scl_proc_id holder;
    struct stat st;
    int claims_fd = -1;

    /* EBUSY: another thread is opening the directory, for microseconds. */
    for (int attempt = 0; attempt < BUSY_RETRIES && (claims_fd = ready_for(key, self, 0)) < 0 && errno == EBUSY;
         attempt++)
        sched_yield();
    if (claims_fd < 0 || scl_watch_open(&key->watch, claims_fd, scl_dir_generation(), key->watch_name, self) != 0)
        return -1;
    if (key->watch_counted_by != self || key->watch_counted_gen != scl_dir_generation()) {
        if (key->watch_counted_by == self && scl_wake_is_mapped(key->watch_counted_gen))
            (void)scl_wake_watching(key->hash, -1); /* the old file, still the one mapped */
        key->watch_counted_by = 0;
        if (scl_wake_watching(key->hash, 1)) {
            key->watch_counted_by = self; /* a release now looks for the FIFO */
            key->watch_counted_gen = scl_dir_generation();
        } else {
            /* Not mapped here (another user's file, or no room): releases
             * must look for every FIFO, as for a user let in. */
            (void)scl_wake_note_others(scl_dir_top_fd());
        }
    }
    /* Watched first, then looked at: whatever ends the hold after this
     * look wakes the watch. */
    if (scl_claim_holder(claims_fd, key->fname, &holder, &st) != 0) {
        if (errno == ENOENT)
            scl_watch_ready(&key->watch); /* free already */
        else if (errno != EINVAL)
            return -1;
        holder.pid = 0; /* EINVAL: not a holder's file, only its removal wakes */
    } else if (holder.pid == self) {
        holder.pid = 0; /* another handle of this process: its release wakes */
    }
    if (scl_watch_holder(&key->watch, &holder) != 0)
        return -1;
    if (key->watch_shown_by != self) { /* for the tools, as a blocking wait is */
        scl_times_waiting(key->fname, self);
        key->watch_shown_by = self;
    }
    return key->watch.epfd;
}

static void fs_wait_end(struct scl_key *key)
{
    pid_t self = scl_proc_self_pid();
    int claims_fd;

    if (key->watch_shown_by == self)
        scl_times_done_waiting(key->fname, self);
    key->watch_shown_by = 0;
    if (key->watch_counted_by == self && scl_wake_is_mapped(key->watch_counted_gen))
        (void)scl_wake_watching(key->hash, -1);
    key->watch_counted_by = 0;
    /* Its FIFO goes with its last waiter, from the directory it is in. */
    claims_fd = key->watch.owner == self && key->watch.gen == scl_dir_generation() ? scl_dir_claims_fd() : -1;
    scl_watch_close(&key->watch, claims_fd, key->watch_name, self);
}

/* A hold here is a link on disk: nothing takes it away but a release
 * (--force included, which release() notices). */
static int fs_held(const struct scl_key *key)
{
    (void)key;
    return 1;
}

/* What the page of times of SELF says (times.h), after keeping FOUND. */
static unsigned fs_drain_told(pid_t self, unsigned found)
{
    return scl_times_drain_told(self, found);
}

/* ------------------------------------------------------------ lifecycle */

/* The work of the lifecycle operations below runs on the library's own
 * stack (own_stack.h) once their fast checks found some to do: a host may
 * fork, reap, exec or exit in a signal handler on a small stack. */

static void fs_at_load(pid_t self)
{
    scl_dir_attach_later(self);
}

/*
 * An image exec'd into its server's place that forks is one of the
 * server's masters (a binary upgrade's new master, uWSGI's re-exec'd
 * one): at its first fork it joins the directory, if made, as a member,
 * so that the directory outlives the process that exec'd it, which hands
 * nothing on to its children as it ends (leave_at_end()).
 */
static void join_as_master(void *unused)
{
    (void)unused;
    scl_kept_fds_prepare();
    scl_lock();
    if (scl_dir_join_locked() < 0)
        scl_debug("could not join claim directory %s at a first fork: %m", scl_dir_path());
    scl_unlock();
}

/*
 * Before every fork, hooked or libc-internal (daemon(3)): the place of the
 * claim directory all its children share is reserved in the parent
 * (dir.h); the first of them that needs the directory makes it there.
 * Once it is reserved, this writes nothing: a server forking its workers
 * pays two loads.  Reserving is a getrandom() and a few hundred bytes of
 * stack: it runs where it is, with signals blocked by the lock, not on
 * the own stack, whose mapping (and the madvise() that keeps it from a
 * child) every shell that forks would pay for without ever claiming.
 */
static void fs_before_fork(pid_t self)
{
    int saved;

    scl_dir_forking(self);
    if (scl_dir_in_use()) {
        if (scl_dir_first_fork_of_handed() && scl_dir_place_made()) {
            saved = errno;
            scl_on_own_stack(join_as_master, NULL);
            errno = saved;
        }
        return;
    }
    saved = errno;
    scl_lock();
    scl_dir_reserve();
    scl_unlock();
    errno = saved;
}

static void fs_after_fork_in_child(void)
{
    /* A child writes nothing until it claims or forks: it is not a member
     * (its pid is not the member's), and that is all it needs to know. */
    scl_dir_after_fork_in_child();
}

/* A reaped child, and how it ended (wait(2)'s status, -1: not known). */
struct reaped {
    pid_t pid;
    int status;
};

static void clear_reaped(void *arg)
{
    const struct reaped *child = arg;
    struct scl_hold_end end = { scl_history_mine(), SCL_HOLD_CLEARED, 0 };
    int claims_fd = scl_dir_claims_fd();

    /* What it held and did not clear itself ends as it ended. */
    if (child->status != -1 && WIFSIGNALED(child->status))
        end = (struct scl_hold_end){ end.history, SCL_HOLD_KILLED, (uint16_t)WTERMSIG(child->status) };
    else if (child->status != -1 && WIFEXITED(child->status))
        end = (struct scl_hold_end){ end.history, SCL_HOLD_ENDED, (uint16_t)WEXITSTATUS(child->status) };
    if (claims_fd < 0 || scl_holder_clear(claims_fd, scl_dir_top_fd(), child->pid, SCL_CLEAR_IF_DEAD, &end, NULL) < 0)
        scl_debug("could not clear the claims of child %d: %m", (int)child->pid);
}

/* A child made the directory at the place reserved here: open it, and let
 * the reaps look for holder files without checking the descriptor first
 * (kept_fds.h). */
static void open_made_place(void *unused)
{
    (void)unused;
    scl_kept_fds_prepare();
    (void)scl_dir_claims_fd();
}

/* 1 when this process has the directory open, opening it when one of its
 * children made it since: one faccessat while nobody has. */
static int dir_opened(void)
{
    if (scl_dir_is_open())
        return 1;
    if (!scl_dir_place_made())
        return 0;
    scl_on_own_stack(open_made_place, NULL);
    return scl_dir_is_open();
}

static void fs_child_reaped(pid_t child, int status)
{
    int saved = errno, claims_fd;

    /* One failed look-up for a child that never claimed: no scan, no look
     * at the top (only its page of times needs it), no switch of stacks,
     * no check of the descriptor (the clearing checks it). */
    if (scl_dir_in_use() && dir_opened() && (claims_fd = scl_dir_claims_fd_trusted()) >= 0 &&
        scl_member_has_holder(claims_fd, child)) {
        struct reaped r = { child, status };
        scl_on_own_stack(clear_reaped, &r);
    }
    errno = saved;
}

static void clear_before_exec(void *arg)
{
    int claims_fd = scl_dir_claims_fd();

    if (claims_fd >= 0)
        (void)scl_member_clear_own(claims_fd, -1, SCL_CLEAR_CLAIMS_ONLY);
    scl_times_forget_wait(*(const pid_t *)arg); /* the exec ends every thread, waiting or not */
}

static int fs_process_execs(void)
{
    pid_t self = getpid();
    int saved;

    /* Only a member can hold anything; the others touch nothing here, not
     * even errno (a fork+exec child shares its pages with its parent). */
    if (!scl_dir_is_member(self))
        return 0;
    saved = errno;
    scl_on_own_stack(clear_before_exec, &self);
    errno = saved;
    return 1;
}

static int fs_exec_env(const char **name, const char **value)
{
    if (!scl_dir_in_use())
        return 0;
    *name = SCL_DIR_ENV;
    *value = scl_dir_path();
    return 1;
}

static _Atomic pid_t ended_pid;

struct ending {
    pid_t self;
    int member, forked;
};

/*
 * A process that forked leaves as a member would, registered or not (a
 * worker may have made the directory and registered only its own
 * parent): as the last, it removes the directory, which a worker that
 * dropped root could not.  It registers none of its children: a child
 * whose own end has run may still be exiting (Net::Server's master stops
 * its workers and ends without waiting for them), and nothing would ever
 * clear a holder file made for it then.  A child that claims later finds
 * the directory, or makes it again at its server's place.  A process
 * another registered (a maker's parent, an image exec'd by a member) has
 * a holder file of its own to clear.
 */
static void leave_at_end(void *arg)
{
    const struct ending *e = arg;
    int claims_fd = scl_dir_claims_fd();

    if (claims_fd < 0 || (!e->member && !e->forked && !scl_member_has_holder(claims_fd, e->self)))
        return;
    scl_dir_leave(claims_fd);
}

static void fs_process_ends(pid_t parent)
{
    pid_t self = getpid();
    int saved = errno, member;
    struct ending e;

    if (!scl_dir_in_use())
        goto out;
    member = scl_dir_is_member(self);
    /* The common case, a worker that never claimed anything and whose
     * parent still runs, costs two system calls, no file work and no
     * write to memory it shares with its parent.  A process that forked
     * (PARENT is itself then) and whose children never made the directory
     * it reserved, one more. */
    if (!member && (getppid() == parent || !dir_opened()))
        goto out;
    if (atomic_exchange(&ended_pid, self) == self)
        goto out;
    e = (struct ending){ .self = self, .member = member, .forked = parent == self };
    scl_on_own_stack(leave_at_end, &e);
out:
    errno = saved;
}

/* The directory, open here: made now when nobody has made it at the
 * place reserved for it yet.  For a process about to lose the way to make
 * it as its server would.  -1 with errno. */
static int dir_made_now(void)
{
    int claims_fd = scl_dir_claims_fd();

    if (claims_fd < 0 && errno == ENOENT) {
        scl_lock();
        claims_fd = scl_dir_join_locked();
        scl_unlock();
    }
    return claims_fd;
}

static void hand_to_user(void *arg)
{
    uid_t uid = *(const uid_t *)arg;
    pid_t self = getpid();
    int claims_fd;

    if (!scl_dir_in_use())
        return;
    /* Made now, while this process may still make it as its server would:
     * made after the drop, it would be this user's, and a root master
     * would not join it. */
    if ((claims_fd = dir_made_now()) >= 0) {
        struct stat st;
        int holder = scl_dir_is_member(self) ? scl_member_open_own_holder(claims_fd, O_RDONLY, &st) : -1;
        int top_fd = scl_dir_top_fd();
        if (top_fd < 0 || scl_acl_grant(top_fd, claims_fd, uid) != 0 || (scl_dir_is_member(self) && holder < 0) ||
            scl_acl_give(top_fd, uid, holder, scl_dir_made_by(self)) != 0)
            scl_debug("cannot hand the claim directory to uid %d: %m", (int)uid);
        /* The user's loop waiters cannot map the wake file: releases look
         * for their FIFOs always. */
        if (top_fd >= 0 && scl_wake_note_others(top_fd) != 0)
            scl_debug("cannot note uid %d's waiters in the wake file: %m", (int)uid);
        if (holder >= 0)
            scl_close_quietly(holder);
    }
}

static void fs_becoming_user(uid_t uid)
{
    int saved = errno;

    if (scl_dir_in_use())
        scl_on_own_stack(hand_to_user, &uid);
    errno = saved;
}

static void made_before_chroot(void *unused)
{
    (void)unused;
    if (dir_made_now() < 0)
        scl_debug("no claim directory before chroot: %m");
}

/* Its descriptors keep working inside the chroot; its paths do not. */
static void fs_before_chroot(void)
{
    int saved = errno;

    if (scl_dir_in_use())
        scl_on_own_stack(made_before_chroot, NULL);
    errno = saved;
}

static void tell_child(void *arg)
{
    pid_t child = *(const pid_t *)arg;
    int top_fd = scl_dir_top_fd();

    /* No page (ENOENT): the child never claimed; it finds its mark in
     * memory all the same. */
    if (top_fd < 0 || (scl_times_tell_draining(top_fd, child, SCL_TOLD_BY_MASTER) != 0 && errno != ENOENT))
        scl_debug("could not note in its page of times that child %d drains: %m", (int)child);
}

/* Its mark in the child's page of times, where the tools read it: written
 * (pwrite, by the master, which may be root) only into a regular file of
 * a page's size with one link (times.h). */
static void fs_child_draining(pid_t child)
{
    int saved = errno;

    if (scl_dir_in_use() && dir_opened())
        scl_on_own_stack(tell_child, &child);
    errno = saved;
}

/* The store table's question (stores.h): the filesystem store, its last
 * row, is the one in use when no other is. */
int scl_fs_chosen(void);
int scl_fs_chosen(void)
{
    return 1;
}

const struct scl_store_ops scl_store_fs = {
    .key_new = fs_key_new,
    .key_free = fs_key_free,
    .try_acquire = fs_try_acquire,
    .release = fs_release,
    .available = fs_available,
    .token = fs_token,
    .acquire_wait = fs_acquire_wait,
    .wait_fd = fs_wait_fd,
    .wait_end = fs_wait_end,
    .held = fs_held,
    .drain_told = fs_drain_told,
    .at_load = fs_at_load,
    .before_fork = fs_before_fork,
    .after_fork_in_child = fs_after_fork_in_child,
    .child_reaped = fs_child_reaped,
    .process_execs = fs_process_execs,
    .exec_env = fs_exec_env,
    .process_ends = fs_process_ends,
    .becoming_user = fs_becoming_user,
    .before_chroot = fs_before_chroot,
    .child_draining = fs_child_draining,
    /* The tools read claim directories themselves (inventory.c); a
     * claim, a link naming the holder's pid, survives exec as it is. */
};
