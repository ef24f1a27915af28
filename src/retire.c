#include "config.h"

#include "holder.h"
#include "log.h"
#include "retire.h"
#include "sigsafe.h"
#include "wake.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int visit_find_alive(int dirfd, pid_t pid, const char *entry, void *arg)
{
    struct scl_proc_id id;
    int fd, alive;

    (void)arg;
    if (pid == 0)
        return 0;
    fd = openat(dirfd, entry, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno == ENOENT ? 0 : 1;
    /* A header we cannot read is somebody's: keep the directory. */
    alive = scl_holder_read_id(fd, &id) != 0 || scl_proc_alive(&id);
    scl_close_quietly(fd);
    return alive;
}

static int visit_clear_dead(int dirfd, pid_t pid, const char *entry, void *arg)
{
    (void)arg;
    if (pid > 0)
        (void)scl_holder_clear(dirfd, pid, SCL_CLEAR_IF_DEAD);
    else
        (void)unlinkat(dirfd, entry, 0); /* a registration its maker never finished */
    return 0;
}

/* Removes NAME from DIRFD if it is still the directory DEV/INO. */
static int rmdir_if_same(int dirfd, const char *name, dev_t dev, ino_t ino)
{
    struct stat st;

    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != dev || st.st_ino != ino)
        return -1;
    return unlinkat(dirfd, name, AT_REMOVEDIR);
}

/*
 * Removes the claim directory NAME of BASEFD (its top open as TOPFD, its
 * claims directory as CLAIMSFD) unless a live member is left: dead
 * holders are cleared first.  Anything left in claims/ (a member that just
 * joined) keeps it all.  0 when removed.
 */
int scl_retire(int basefd, const char *name, int topfd, int claimsfd)
{
    struct stat st;

    if (scl_holders_scan(claimsfd, visit_find_alive, NULL) != 0)
        return -1;
    (void)scl_holders_scan(claimsfd, visit_clear_dead, NULL);
    if (fstat(claimsfd, &st) != 0 || rmdir_if_same(topfd, SCL_CLAIMS_DIR, st.st_dev, st.st_ino) != 0 ||
        (unlinkat(topfd, SCL_WAKE_FILE, 0) != 0 && errno != ENOENT) || fstat(topfd, &st) != 0)
        return -1;
    return rmdir_if_same(basefd, name, st.st_dev, st.st_ino);
}

/* A ".new" directory this old was left by a creator that died mid-way. */
#define STALE_NEW_SECONDS 3600

/* Removes a ".new" directory a dead creator left (its holder file, its
 * claims directory, its wake file). */
static void remove_unfinished(int basefd, const char *name)
{
    int topfd = scl_open_dir_at(basefd, name), claimsfd;

    if (topfd < 0)
        return;
    claimsfd = scl_open_dir_at(topfd, SCL_CLAIMS_DIR);
    if (claimsfd >= 0) {
        (void)scl_holders_scan(claimsfd, visit_clear_dead, NULL);
        scl_close_quietly(claimsfd);
    }
    (void)unlinkat(topfd, SCL_CLAIMS_DIR, AT_REMOVEDIR);
    (void)unlinkat(topfd, SCL_WAKE_FILE, 0);
    (void)unlinkat(basefd, name, AT_REMOVEDIR);
    scl_close_quietly(topfd);
}

static void sweep_one(int basefd, const char *name)
{
    size_t len = strlen(name);
    struct stat st;
    struct timespec now;
    int topfd, claimsfd;

    /* Our user's alone: never another user's, even for root. */
    if (fstatat(basefd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
        return;
    if (len > sizeof SCL_NEW_SUFFIX && strcmp(name + len - (sizeof SCL_NEW_SUFFIX - 1), SCL_NEW_SUFFIX) == 0) {
        clock_gettime(CLOCK_REALTIME, &now);
        if (now.tv_sec - st.st_mtime > STALE_NEW_SECONDS)
            remove_unfinished(basefd, name);
        return;
    }
    topfd = scl_open_dir_at(basefd, name);
    if (topfd < 0)
        return;
    claimsfd = scl_open_dir_at(topfd, SCL_CLAIMS_DIR);
    if (claimsfd >= 0) {
        if (scl_retire(basefd, name, topfd, claimsfd) == 0)
            scl_debug("removed abandoned claim directory %s", name);
        scl_close_quietly(claimsfd);
    }
    scl_close_quietly(topfd);
}

/*
 * Claim directories of this user below BASEFD that no live process uses
 * any more (a server SIGKILLed whole) are removed by the next one made
 * beside them.  getdents64 on a stack buffer: this may run in the fork
 * handler, in a signal handler.
 */
void scl_sweep_abandoned(int basefd)
{
    char buf[4096] __attribute__((aligned(8)));
    int fd = scl_open_dir_at(basefd, ".");

    if (fd < 0)
        return;
    for (;;) {
        ssize_t n = getdents64(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (ssize_t off = 0; off < n;) {
            struct dirent64 *d = (struct dirent64 *)(buf + off);
            off += d->d_reclen;
            if (strncmp(d->d_name, SCL_DIR_PREFIX, sizeof SCL_DIR_PREFIX - 1) == 0)
                sweep_one(basefd, d->d_name);
        }
    }
    scl_close_quietly(fd);
}

