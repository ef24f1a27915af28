/* SPDX-License-Identifier: MIT */
/*
 * The claim directory this process uses (dir.h): making it in a checked
 * base, joining one named by SWERVE_CLAIM_DIR or by the tool, keeping its
 * descriptors safe from the host, and retiring it as its last member
 * leaves.  Its holder file there is member.c's.
 */
#include "config.h"

#include "bound.h"
#include "budget.h"
#include "children.h"
#include "dir.h"
#include "dir_fds.h"
#include "fork_page.h"
#include "history.h"
#include "holder.h"
#include "hot.h"
#include "retire.h"
#include "log.h"
#include "member.h"
#include "own_stack.h"
#include "settings.h"
#include "sigsafe.h"
#include "wake.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* How long a thread waits for another that is opening or making the
 * directory before it gives up with EBUSY: a few system calls, or a
 * sweep of the base. */
#define SLOT_WAIT_NS (200 * 1000000LL)

/* 1 once the directory's two descriptors are kept (dir_fds.h), which
 * are written before it is set (release) and read after (acquire). */
SCL_HOT static atomic_int ready;
/* A directory to open on first use, not opened yet (1 pending, 2 being
 * opened): the place its server reserved at its first fork, or the one
 * SWERVE_CLAIM_DIR names.  A host that never claims never touches it. */
SCL_HOT static atomic_int pending;
/* Where the directory is: what `pending` opens, and where it is made
 * again should its last member remove it.  SWERVE_CLAIM_DIR's copy in
 * the settings, else place_buf: an exec'd image that only inherits the
 * path writes no .bss page of its own for it (hot.h). */
static char place_buf[PATH_MAX];
SCL_HOT static const char *place_path = place_buf;
/* The thread that holds `pending` at 2 (opening or making the directory),
 * or 0. */
static _Atomic uintptr_t slot_owner;
/* 1 when place_path is this server's place (reserved at a first fork,
 * or where this process made its directory): made there by the first
 * process that needs it, never swapped for a directory of one's own
 * (siblings would then miss each other's claims). */
SCL_HOT static atomic_int place_reserved;
/* 1 in an image exec'd into its server's place until its first fork. */
SCL_HOT static atomic_int handed_place;
static atomic_uint generation;
/* The process whose children this process's are (itself once it has
 * forked), and the one that forked this process before that: 0 where it is
 * not known (an exec'd image: its parent may not be the server's).  Both
 * written only by a process about to fork, on its side. */
SCL_HOT static _Atomic pid_t children_of, forked_by;

/* The process the directory is for: the one that made it, or that
 * reserved its place at its first fork (a worker may make it on its
 * master's behalf).  It hands the top over when it drops root for good
 * (acl.h). */
static _Atomic pid_t creator_pid;
/* The process whose image started with SWERVE_CLAIM_DIR (exec'd by a
 * process of its server), or 0: it registers as exec'd, its forked
 * children (other pids) as themselves.  Written at load. */
SCL_HOT static _Atomic pid_t exec_started;

int scl_dir_in_use(void)
{
    return atomic_load_explicit(&ready, memory_order_acquire) || atomic_load(&pending) != 0;
}

const char *scl_dir_path(void)
{
    if (atomic_load_explicit(&ready, memory_order_acquire))
        return scl_dir_fds_top_path();
    return atomic_load(&pending) != 0 ? place_path : "";
}

int scl_dir_is_open(void)
{
    return atomic_load_explicit(&ready, memory_order_acquire);
}

int scl_dir_place_made(void)
{
    /* The path is static: nothing on a reap's stack. */
    return atomic_load(&pending) != 0 &&
           scl_bound.faccessat(AT_FDCWD, place_path, F_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW) == 0;
}

/* 1 when PATH ends in a place's name, swerve-claim.XXXXXXXXXXXX, below
 * a base (checked as every base is when it is made there): a place a
 * server reserved, which may be made here. */
static int is_reservable(const char *path)
{
    const char *slash = strrchr(path, '/');

    return slash != NULL && slash != path && scl_layout_is_random(slash + 1);
}

void scl_dir_attach_later(pid_t self)
{
    const char *path = scl_settings()->claim_dir;

    if (path[0] == '\0' || atomic_load(&ready))
        return;
    place_path = path;
    atomic_store(&exec_started, self);
    /* An exec'd worker of a server whose directory nobody has needed yet
     * makes it where its siblings will look, and registers the parent
     * that forked it there: the image that exec'd had the place, so that
     * parent had it too. */
    if (is_reservable(path)) {
        atomic_store(&place_reserved, 1);
        atomic_store(&children_of, getppid());
        atomic_store(&handed_place, 1);
    }
    atomic_store(&pending, 1);
}

int scl_dir_first_fork_of_handed(void)
{
    return atomic_load(&handed_place) && atomic_exchange(&handed_place, 0);
}

static int attach(const char *path);
static int join_locked(int may_make);

/*
 * Takes the right to publish a directory in this process (`pending` at 2),
 * for a thread about to open or make one: two threads publishing at once
 * would leave a pair of descriptors behind, and the kept ones past 63.
 * Waits, a bounded while, for another thread that holds it (EBUSY after
 * that: a busy that must never read as "held"), never for this very
 * thread (EDEADLK: a signal handler that interrupted it there).  Returns
 * what `pending` was (0 or 1), for slot_give(), or -1.
 */
static int slot_take(void)
{
    uintptr_t self = (uintptr_t)pthread_self();
    int64_t deadline = 0;

    for (;;) {
        int seen = atomic_load(&pending);
        if (seen != 2) {
            if (atomic_compare_exchange_strong(&pending, &seen, 2)) {
                atomic_store(&slot_owner, self);
                return seen;
            }
            continue;
        }
        if (atomic_load(&slot_owner) == self) {
            errno = EDEADLK; /* it would wait for itself */
            return -1;
        }
        if (deadline == 0)
            deadline = scl_monotonic_ns() + SLOT_WAIT_NS;
        else if (scl_monotonic_ns() > deadline)
            break;
        sched_yield();
    }
    errno = EBUSY;
    return -1;
}

static void slot_give(int value)
{
    atomic_store(&slot_owner, 0);
    atomic_store(&pending, value);
}

/* Opens the directory of place_path, on first use. */
static int attach_pending(void)
{
    int was = slot_take(), saved;

    if (was < 0)
        return -1;
    if (atomic_load_explicit(&ready, memory_order_acquire)) {
        slot_give(0); /* another thread published it meanwhile */
        return 0;
    }
    if (was == 0) {
        slot_give(0);
        errno = ENOENT;
        return -1;
    }
    if (attach(place_path) == 0) {
        slot_give(0);
        return 0;
    }
    saved = errno;
    if (atomic_load(&place_reserved)) {
        /* Not made yet (ENOENT), or somebody else's stands there: the
         * claim that needs it makes it, or says why it cannot. */
        if (saved != ENOENT)
            scl_debug("cannot join %s: %m", place_path);
        slot_give(1);
        errno = saved;
        return -1;
    }
    scl_debug("cannot join %s: %m", place_path);
    slot_give(0); /* a directory of its own, then */
    errno = ENOENT;
    return -1;
}

void scl_dir_after_fork_in_child(void)
{
    /* The thread that was opening the directory is not in this child.
     * Written only then: a child writes nothing it need not. */
    if (atomic_load(&pending) == 2)
        slot_give(1);
}

static int may_join(const struct stat *top, const struct stat *claims);

/*
 * On the own stack, under the right to publish: ours was removed while
 * this process lived on (its last member left, and this process was none
 * or was left out: a master that forked its successor and ended, as
 * php-fpm's reload in daemon mode does).  Its server's processes make it
 * again at its place as they claim; once one has, this process joins it
 * there, as it would have joined it first, and its kept numbers then
 * name the new one (a number the host has taken since stays the host's).
 * It makes nothing: a claim does (scl_dir_join_locked()), and registers
 * this process anew.  *ARG: 0, or -1 (not made again yet).
 */
static void rejoin_place(void *arg)
{
    struct stat top, claims;
    int *r = arg, top_fd, claims_fd = -1;

    *r = -1;
    if (!atomic_load(&place_reserved) || strcmp(place_path, scl_dir_fds_top_path()) != 0)
        return; /* no place of its server's to look at */
    if (scl_dir_fds_check_fd(SCL_KEPT_CLAIMS, scl_dir_fds_get(SCL_KEPT_CLAIMS)) != SCL_DIR_FD_REMOVED) {
        *r = 0; /* another thread rejoined it meanwhile */
        return;
    }
    top_fd = scl_openat(AT_FDCWD, place_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
    if (top_fd < 0 || fstat(top_fd, &top) != 0 || !may_join(&top, NULL) ||
        (claims_fd = scl_open_dir_at(top_fd, SCL_CLAIMS_DIR)) < 0 || fstat(claims_fd, &claims) != 0 ||
        !may_join(&top, &claims) || (top.st_dev == scl_dir_fds_top_dev() && top.st_ino == scl_dir_fds_top_ino())) {
        if (claims_fd >= 0)
            scl_close_quietly(claims_fd);
        if (top_fd >= 0)
            scl_close_quietly(top_fd);
        return;
    }
    *r = scl_dir_fds_renew(&top, &claims, top_fd, claims_fd);
    scl_kept_fds_touched(0, ~0U);
    scl_member_set_registered(0); /* its next claim registers it here */
    atomic_fetch_add(&generation, 1);
    scl_wake_map(scl_dir_fds_get(SCL_KEPT_TOP), atomic_load(&generation));
    scl_history_map(scl_dir_fds_get(SCL_KEPT_TOP), atomic_load(&generation));
    scl_debug("joined claim directory %s again: it was made anew there", scl_dir_fds_top_path());
}

/* The removed directory's place, joined once made again there: 0, or -1
 * with errno ENOENT (not made again, no place, or another thread is
 * publishing).  Kept out of checked_fd()'s frame: nothing of it runs on
 * the host's stack but the switch. */
__attribute__((noinline)) static int rejoin(void)
{
    int was, r = -1;

    if ((was = slot_take()) >= 0) {
        scl_on_own_stack(rejoin_place, &r);
        slot_give(was);
    }
    if (r != 0)
        errno = ENOENT; /* as if not made again: a claim makes it, or waits */
    return r;
}

static int checked_fd(enum scl_kept_fd which)
{
    if (!atomic_load_explicit(&ready, memory_order_acquire) && (!atomic_load(&pending) || attach_pending() != 0)) {
        if (errno != EBUSY && errno != EDEADLK)
            errno = ENOENT;
        return -1;
    }
    for (int attempt = 0; attempt < 3; attempt++) {
        int fd, r;
        switch (scl_dir_fds_check(which, &fd)) {
        case SCL_DIR_FD_OURS: return fd;
        case SCL_DIR_FD_REMOVED:
            if (rejoin() == 0)
                continue; /* the new one, checked as any */
            return -1;
        case SCL_DIR_FD_NOT_OURS: break;
        }
        /* The host closed or replaced our descriptor: never touch that
         * number again, open our own (another thread may have first). */
        r = scl_dir_fds_reopen(which, fd, &fd);
        if (r <= 0)
            return r == 0 ? fd : -1;
    }
    errno = EBADF;
    return -1;
}

int scl_dir_claims_fd(void)
{
    return checked_fd(SCL_KEPT_CLAIMS);
}

int scl_dir_claims_fd_trusted(void)
{
    int fd = scl_kept_fd_trusted(SCL_KEPT_CLAIMS);

    return fd >= 0 && fd == scl_dir_fds_get(SCL_KEPT_CLAIMS) ? fd : scl_dir_claims_fd();
}

int scl_dir_top_fd(void)
{
    return checked_fd(SCL_KEPT_TOP);
}

unsigned scl_dir_generation(void)
{
    return atomic_load(&generation);
}

int scl_dir_is_member(pid_t self)
{
    return scl_dir_in_use() && scl_member_registered() == self;
}

int scl_dir_claims_fd_unchecked(void)
{
    return atomic_load_explicit(&ready, memory_order_acquire) ? scl_dir_fds_get(SCL_KEPT_CLAIMS) : -1;
}

int scl_dir_made_by(pid_t self)
{
    return atomic_load(&creator_pid) == self;
}

/*
 * Opens BASE to make a claim directory named with NAME_LEN bytes in it,
 * once it is plain that only its owner and root can take names from
 * under us there: not writable by its group or others without the sticky
 * bit (as /tmp has it), owned by root or by this user.  Nothing is ever
 * made elsewhere instead.  -1 with errno and one debug line naming the
 * path and why.
 */
static int open_base(const char *base, size_t name_len)
{
    const char *why;
    struct stat st;
    int fd, saved;

    if (base[0] == '\0') {
        errno = scl_settings()->base_error;
        scl_why("no base directory for claim directories: SWERVE_TMPDIR or TMPDIR is unusable: %m");
        return -1;
    }
    if (strlen(base) + 1 + name_len + sizeof "/" SCL_CLAIMS_DIR > PATH_MAX) {
        errno = ENAMETOOLONG;
        scl_why("cannot make claim directories in %s: the path is too long", base);
        return -1;
    }
    fd = scl_openat(AT_FDCWD, base, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd < 0) {
        scl_why("cannot open %s for claim directories: %m", base);
        return -1;
    }
    if (fstat(fd, &st) != 0) {
        why = "it cannot be examined";
    } else if ((st.st_mode & (S_IWOTH | S_IWGRP)) && !(st.st_mode & S_ISVTX)) {
        /* Its group could rename another server's directory onto ours. */
        why = "its group or others may write it without the sticky bit";
        errno = EPERM;
    } else if (st.st_uid != 0 && st.st_uid != geteuid()) {
        why = "it belongs to another user";
        errno = EPERM;
    } else {
        return fd;
    }
    saved = errno;
    scl_why("will not make claim directories in %s: %s (owner uid %lu, mode %#o)", base, why, (unsigned long)st.st_uid,
            (unsigned)(st.st_mode & 07777));
    scl_close_quietly(fd);
    errno = saved;
    return -1;
}

static void random_chars(char out[SCL_RANDOM_CHARS + 1])
{
    static atomic_uint counter;
    unsigned char bytes[SCL_RANDOM_CHARS];

    /* Through scl_bound: the fork hook reserves on the host's stack. */
    if (scl_bound.syscall(SYS_getrandom, bytes, sizeof bytes, GRND_NONBLOCK) != (long)sizeof bytes) {
        /* No entropy yet (early boot): unique, if guessable; the 0700
         * mode and the owner check keep it safe all the same. */
        struct timespec ts = { 0, 0 };
        unsigned long long mix;
        (void)scl_bound.syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
        mix = (unsigned long long)ts.tv_nsec ^ (unsigned long long)ts.tv_sec << 30 ^
              (unsigned long long)getpid() << 40 ^ atomic_fetch_add(&counter, 1);
        for (size_t i = 0; i < sizeof bytes; i++, mix = mix * 6364136223846793005ULL + 1442695040888963407ULL)
            bytes[i] = (unsigned char)(mix >> 56);
    }
    for (size_t i = 0; i < SCL_RANDOM_CHARS; i++)
        out[i] = SCL_RANDOM_ALPHABET[bytes[i] & 31];
    out[SCL_RANDOM_CHARS] = '\0';
}

void scl_dir_forking(pid_t self)
{
    pid_t was = atomic_load(&children_of);

    if (was == self)
        return;
    atomic_store(&forked_by, was);
    atomic_store(&children_of, self);
}

/* The process that forked this one, SELF, or 0 when it is not known. */
static pid_t forker_of(pid_t self)
{
    pid_t parent = atomic_load(&children_of);

    return parent != self ? parent : atomic_load(&forked_by);
}

void scl_dir_reserve(void)
{
    const char *base = scl_settings()->base_dir;
    char rnd[SCL_RANDOM_CHARS + 1];

    if (scl_dir_in_use() || base[0] == '\0')
        return; /* an unusable base says why when a claim needs it */
    random_chars(rnd);
    if (scl_concat(place_buf, sizeof place_buf, base, "/" SCL_DIR_PREFIX, rnd, (char *)NULL) != 0)
        return;
    place_path = place_buf;
    atomic_store(&creator_pid, getpid());
    atomic_store(&place_reserved, 1);
    atomic_store(&pending, 1);
}

/* Registers this process in the claims directory CLAIMS_FD, saying so
 * when its image was exec'd there. */
static int register_self(int claims_fd)
{
    return scl_member_register_self(claims_fd, atomic_load(&exec_started) == getpid());
}

/* Removes what build() made in a directory that never got published. */
static void unbuild(int basefd, const char *name, int top_fd, int claims_fd)
{
    char holder[SCL_PID_NAME_MAX];

    if (claims_fd >= 0) {
        scl_holder_path(holder, getpid());
        (void)unlinkat(claims_fd, holder, 0);
        scl_close_quietly(claims_fd);
    }
    (void)unlinkat(top_fd, SCL_CLAIMS_DIR, AT_REMOVEDIR);
    (void)unlinkat(top_fd, SCL_WAKE_FILE, 0);
    (void)unlinkat(top_fd, SCL_HISTORY_FILE, 0);
    scl_close_quietly(top_fd);
    (void)unlinkat(basefd, name, AT_REMOVEDIR);
}

/* Makes BASE/NEW_NAME and its claims directory, with this process
 * registered; returns the claims directory's descriptor, with the top's
 * in *TOP_FD_OUT, or -1 with errno. */
static int build(int basefd, const char *new_name, struct stat *top, struct stat *claims, int *top_fd_out)
{
    int top_fd, claims_fd = -1, saved;

    if (mkdirat(basefd, new_name, 0700) != 0)
        return -1;
    top_fd = scl_open_dir_at(basefd, new_name);
    if (top_fd < 0) {
        saved = errno;
        (void)unlinkat(basefd, new_name, AT_REMOVEDIR);
        errno = saved;
        return -1;
    }
    /* The umask may have narrowed 0700; nothing may widen it. */
    if (fstat(top_fd, top) != 0)
        goto failed;
    if (top->st_uid != geteuid()) {
        errno = EPERM;
        goto failed;
    }
    if (fchmod(top_fd, 0700) != 0 || scl_wake_create(top_fd) != 0)
        goto failed;
    (void)scl_history_create(top_fd); /* without one (a full filesystem), claims have no history */
    if (mkdirat(top_fd, SCL_CLAIMS_DIR, 0700) != 0)
        goto failed;
    claims_fd = scl_open_dir_at(top_fd, SCL_CLAIMS_DIR);
    if (claims_fd < 0 || fstat(claims_fd, claims) != 0 || register_self(claims_fd) != 0)
        goto failed;
    *top_fd_out = top_fd;
    return claims_fd;
failed:
    saved = errno;
    unbuild(basefd, new_name, top_fd, claims_fd);
    errno = saved;
    return -1;
}

/* Makes the directory at PATH, or BASE/NAME (top and claims as given,
 * open as TOP_FD and CLAIMS_FD; both kept from now on: dir_fds.h) the one this
 * process uses, with MEMBER registered in it (or 0). */
static int publish(const char *base, const char *name, const struct stat *top, const struct stat *claims, int top_fd,
                   int claims_fd, pid_t member)
{
    const char *slash = name != NULL ? "/" : "", *rest = name != NULL ? name : "";

    if (scl_dir_fds_keep(base, slash, rest, top, claims, top_fd, claims_fd) != 0)
        return -1;
    scl_kept_fds_touched(0, ~0U); /* no check of the directory before stands */
    scl_member_set_registered(member);
    atomic_fetch_add(&generation, 1);
    atomic_store_explicit(&ready, 1, memory_order_release);
    /* Mapped now, while this process surely may: its children inherit the
     * mappings, and a worker that drops privileges cannot open the files. */
    scl_wake_map(scl_dir_fds_get(SCL_KEPT_TOP), atomic_load(&generation));
    scl_history_map(scl_dir_fds_get(SCL_KEPT_TOP), atomic_load(&generation));
    return 0;
}

/*
 * Makes a claim directory in BASEFD: named NAME, or when NAME is NULL,
 * SCL_DIR_PREFIX and random characters; its name in MADE.  It is built
 * aside under a ".new" name and renamed into place whole, never over
 * another's.  Its claims descriptor, with TOP and CLAIMS filled in and the
 * top's descriptor in *TOP_FD, or -1 with errno (EEXIST: NAME exists
 * already).
 */
static int make_dir(int basefd, const char *name, char made[NAME_MAX + 1], struct stat *top, struct stat *claims,
                    int *top_fd)
{
    /* Under scl_lock(), like every caller: static, off the fork path's
     * stack. */
    static char new_name[NAME_MAX + 1];
    char rnd[SCL_RANDOM_CHARS + 1], aside[SCL_RANDOM_CHARS + 1];

    for (int attempt = 0; attempt < 16; attempt++) {
        int claims_fd, saved;
        random_chars(rnd);
        /* Built under a name of its own: a reserved place's name is known
         * only inside its server, and anybody may watch the base. */
        random_chars(aside);
        if (scl_concat(made, NAME_MAX + 1, name != NULL ? name : SCL_DIR_PREFIX, name != NULL ? "" : rnd,
                       (char *)NULL) != 0 ||
            scl_concat(new_name, sizeof new_name, SCL_DIR_PREFIX, aside, SCL_NEW_SUFFIX, (char *)NULL) != 0)
            return -1;
        claims_fd = build(basefd, new_name, top, claims, top_fd);
        if (claims_fd < 0) {
            if (errno == EEXIST)
                continue; /* another's ".new": another name */
            return -1;
        }
        scl_history_take_back(basefd, made, *top_fd);
        if (renameat2(basefd, new_name, basefd, made, RENAME_NOREPLACE) == 0)
            return claims_fd;
        saved = errno;
        (void)scl_history_keep(basefd, made, *top_fd); /* for the next one, as it was */
        unbuild(basefd, new_name, *top_fd, claims_fd);
        errno = saved;
        if (saved != EEXIST || name != NULL)
            return -1;
    }
    errno = EEXIST;
    return -1;
}

/* Registers this process's parent, alive, in the directory it just made
 * at its server's place, when that parent forked it (and so had the place
 * too): the parent keeps the directory then, and no worker's end removes
 * it under its master.  Any other parent (an exec'd image's, a subreaper
 * that adopted an orphan) may be no process of the server at all. */
static void register_parent(int fd)
{
    pid_t parent = getppid();

    if (parent > 1 && parent == forker_of(getpid()) && scl_member_register_parent(fd, parent) != 0)
        scl_debug("could not register parent %d in %s: %m", (int)parent, scl_dir_fds_top_path());
}

/* Makes BASE/NAME the directory this process uses: made here when it does
 * not exist (FOR_SERVER: the place its server reserved; its maker's parent
 * registered, and this user's abandoned directories beside it swept once
 * it is made), joined when it does. */
static int use_place_locked(const char *base, const char *name, int for_server)
{
    static char path[PATH_MAX]; /* under scl_lock(), off the stack */
    char made[NAME_MAX + 1];
    struct stat top, claims;
    int basefd, claims_fd, top_fd, r = -1, saved;

    if (scl_concat(path, sizeof path, base, "/", name, (char *)NULL) != 0)
        return -1;
    basefd = open_base(base, strlen(name) + 1 + SCL_RANDOM_CHARS + sizeof SCL_NEW_SUFFIX);
    if (basefd < 0)
        return -1;
    /* Whoever made it first, we use theirs; if its last member removes it
     * meanwhile, it is made again. */
    for (int attempt = 0; attempt < 3; attempt++) {
        claims_fd = make_dir(basefd, name, made, &top, &claims, &top_fd);
        if (claims_fd >= 0) {
            r = publish(path, NULL, &top, &claims, top_fd, claims_fd, getpid());
            if (r != 0) {
                scl_close_quietly(claims_fd);
                scl_close_quietly(top_fd);
            } else if (for_server) {
                scl_debug("made claim directory %s", scl_dir_fds_top_path());
                register_parent(scl_dir_fds_get(SCL_KEPT_CLAIMS));
                /* Only once made: a place it cannot make or join must not
                 * cost a sweep on every call. */
                scl_sweep_abandoned(basefd);
            } else {
                atomic_store(&creator_pid, getpid());
            }
            break;
        }
        if (errno != EEXIST)
            break;
        if (attach(path) == 0) {
            r = scl_dir_join_locked() >= 0 ? 0 : -1;
            break;
        }
        if (errno != ENOENT)
            break;
    }
    saved = errno;
    scl_close_quietly(basefd);
    errno = saved;
    return r;
}

int scl_dir_use_named(const char *base, const char *name)
{
    int r, saved;

    scl_lock();
    r = use_place_locked(base, name, 0);
    saved = errno;
    scl_unlock();
    errno = saved;
    return r;
}

int scl_dir_use_environment(const char *path)
{
    int reservable = is_reservable(path), r, saved;

    scl_lock();
    /* The place as scl_dir_attach_later() takes it, then what a claim
     * does with it (attach_pending(), create_locked()): joined when it
     * stands, made only when it does not and is a place; one removed
     * meanwhile is made again there, never elsewhere. */
    place_path = path;
    atomic_store(&place_reserved, reservable);
    if (attach(path) == 0 || (errno == ENOENT && reservable))
        r = join_locked(reservable) >= 0 ? 0 : -1;
    else
        r = -1;
    saved = errno;
    scl_unlock();
    errno = saved;
    return r;
}

/* The place this server reserved (dir.h), split at its last '/'. */
static int create_reserved_locked(void)
{
    static char base[PATH_MAX]; /* under scl_lock(), off the stack */
    const char *slash = strrchr(place_path, '/');
    int was;

    if (slash == NULL || slash == place_path) {
        errno = EINVAL;
        return -1;
    }
    memcpy(base, place_path, (size_t)(slash - place_path));
    base[slash - place_path] = '\0';
    if ((was = slot_take()) < 0)
        return -1;
    if (atomic_load_explicit(&ready, memory_order_acquire)) {
        slot_give(0); /* another thread opened it meanwhile */
        return scl_dir_claims_fd();
    }
    if (use_place_locked(base, slash + 1, 1) != 0) {
        int saved = errno;
        slot_give(was);
        errno = saved; /* scl_debug() keeps it */
        scl_why("cannot make or join claim directory %s: %m", place_path);
        return -1;
    }
    slot_give(0);
    return scl_dir_claims_fd();
}

static int create_locked(void)
{
    const char *base = scl_settings()->base_dir;
    static char name[NAME_MAX + 1]; /* under scl_lock(), off the stack */
    struct stat top, claims;
    int basefd, claims_fd, top_fd, saved;

    if (atomic_load(&place_reserved))
        return create_reserved_locked();
    basefd = open_base(base, sizeof SCL_DIR_PREFIX + SCL_RANDOM_CHARS + sizeof SCL_NEW_SUFFIX);
    if (basefd < 0)
        return -1;
    claims_fd = make_dir(basefd, NULL, name, &top, &claims, &top_fd);
    if (claims_fd < 0) {
        saved = errno;
        scl_close_quietly(basefd);
        errno = saved; /* scl_debug() keeps it */
        scl_why("cannot make a claim directory in %s: %m", base);
        return -1;
    }
    if (publish(base, name, &top, &claims, top_fd, claims_fd, getpid()) != 0) {
        saved = errno;
        scl_close_quietly(claims_fd);
        scl_close_quietly(top_fd);
        scl_close_quietly(basefd);
        errno = saved;
        return -1;
    }
    scl_sweep_abandoned(basefd); /* once made: a failure costs no sweep */
    scl_close_quietly(basefd);
    atomic_store(&creator_pid, getpid());
    /* Its place from now on: should its last member remove it, this
     * process and its children make it again there, not each one its own. */
    if (scl_concat(place_buf, sizeof place_buf, scl_dir_fds_top_path(), (char *)NULL) == 0) {
        place_path = place_buf;
        atomic_store(&place_reserved, 1);
    }
    scl_debug("made claim directory %s", scl_dir_fds_top_path());
    return scl_dir_fds_get(SCL_KEPT_CLAIMS);
}

/* 1 when the directory whose top is TOP may be joined: this user's or
 * root's, with no permission for others, and its claims directory made by
 * the top's owner or this user (a worker let into the top may put a
 * directory of its own in place of claims/).  Else 0 with errno EPERM:
 * somebody else's directory would let them fake or steal claims. */
static int may_join(const struct stat *top, const struct stat *claims)
{
    uid_t self = geteuid();

    if ((top->st_uid != self && top->st_uid != 0) || (top->st_mode & 0007) != 0 ||
        (claims != NULL && claims->st_uid != top->st_uid && claims->st_uid != self)) {
        errno = EPERM;
        return 0;
    }
    return 1;
}

static int attach(const char *path)
{
    struct stat top, claims;
    int top_fd, claims_fd = -1, saved;

    top_fd = scl_openat(AT_FDCWD, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
    if (top_fd < 0)
        return -1;
    /* Nothing in it is looked at before its owner is known. */
    if (fstat(top_fd, &top) != 0 || !may_join(&top, NULL))
        goto failed;
    claims_fd = scl_open_dir_at(top_fd, SCL_CLAIMS_DIR);
    if (claims_fd < 0 || fstat(claims_fd, &claims) != 0 || !may_join(&top, &claims) ||
        publish(path, NULL, &top, &claims, top_fd, claims_fd, 0) != 0)
        goto failed;
    scl_debug("joined claim directory %s", scl_dir_fds_top_path());
    return 0;
failed:
    saved = errno;
    if (claims_fd >= 0)
        scl_close_quietly(claims_fd);
    scl_close_quietly(top_fd);
    errno = saved;
    return -1;
}

/* scl_dir_join_locked(), which makes no directory unless MAY_MAKE. */
static int join_locked(int may_make)
{
    int claims_fd = scl_dir_claims_fd();

    if (claims_fd < 0) {
        if (errno != ENOENT || !may_make)
            return -1;
        /* None yet, or ours was removed (the last member left while this
         * process, never registered, lived on): start a new one. */
        if (atomic_load(&ready)) {
            scl_dir_fds_forget();
            atomic_store_explicit(&ready, 0, memory_order_release);
        }
        return create_locked();
    }
    if (scl_member_registered() == getpid())
        return claims_fd;
    if (register_self(claims_fd) != 0)
        return -1;
    scl_member_set_registered(getpid());
    return claims_fd;
}

int scl_dir_join_locked(void)
{
    return join_locked(1);
}

/* The directory's claims descriptor, and whether a successor was
 * registered in it. */
struct successor {
    int claims_fd;
    int registered;
};

/* A child of a leaving master that leads a session of its own is its
 * successor (php-fpm's reload in daemon mode forks the new master so):
 * registered, it keeps the directory, which is its server's still, and
 * its own end removes it.  A worker, which leads none, is never
 * registered: its own end may have run already (Starman's workers linger
 * after it), and nothing would clear a holder file made for it then. */
static void keep_for_successor(pid_t child, void *arg)
{
    struct successor *s = arg;

    if (scl_bound.syscall(SYS_getsid, child) == child && scl_member_register_child(s->claims_fd, child) == 0)
        s->registered = 1;
}

void scl_dir_leave(int claims_fd)
{
    struct successor s = { claims_fd, 0 };

    (void)scl_member_clear_own(claims_fd, scl_dir_top_fd(), SCL_CLEAR_OWN);
    scl_member_set_registered(0);
    /* Only the last live member removes it, and looks after its own
     * holder file is gone: of two ending at once, the later finds the
     * other gone.  A live parent that is a member is not gone: no need
     * to look at every member.  The parent from the path itself: an
     * exec'd member may not have been given the SWERVE_TMPDIR its server
     * was started with. */
    if (scl_member_parent_is_live(claims_fd))
        return;
    (void)scl_children_each(keep_for_successor, &s); /* bounded by the table of children */
    if (!s.registered && scl_retire_path(scl_dir_fds_top_path(), scl_dir_fds_top_dev(), scl_dir_fds_top_ino(),
                                         SCL_BUDGET_RETIRE_LEFTOVERS) == 0)
        scl_debug("removed claim directory %s", scl_dir_fds_top_path());
}
