/*
 * Privileges and chroot.  A root process about to become another user
 * first lets that user into the claim directory (acl.h): servers fork
 * their workers as root and drop privileges in them afterwards, and uWSGI
 * drops in its master, in a directory its root launcher made.  A process
 * about to chroot reads its start time while /proc is still there; the
 * claim directory's descriptor keeps working inside the chroot.
 *
 * setgid(), setgroups() and initgroups() need nothing: access is granted
 * per user.
 */
#include "config.h"

#include "acl.h"
#include "export.h"
#include "lifecycle.h"
#include "log.h"
#include "proc.h"
#include "real.h"
#include "serverdir.h"

#include <errno.h>
#include <unistd.h>

static void before_becoming(uid_t uid)
{
    int saved = errno, dirfd;

    scl_lifecycle_init();
    if (uid == (uid_t)-1 || uid == 0 || geteuid() != 0 || !scl_dir_in_use() || (dirfd = scl_dir_fd()) < 0)
        goto out;
    if (scl_acl_grant(dirfd, uid) != 0)
        scl_debug("cannot let uid %d into the claim directory: errno %d", (int)uid, errno);
out:
    errno = saved;
}

static int unavailable(void)
{
    errno = ENOSYS;
    return -1;
}

SCL_EXPORT int setuid(uid_t uid)
{
    int (*real)(uid_t) = scl_real()->setuid;

    before_becoming(uid);
    return real != NULL ? real(uid) : unavailable();
}

SCL_EXPORT int seteuid(uid_t euid)
{
    int (*real)(uid_t) = scl_real()->seteuid;

    before_becoming(euid);
    return real != NULL ? real(euid) : unavailable();
}

SCL_EXPORT int setreuid(uid_t ruid, uid_t euid)
{
    int (*real)(uid_t, uid_t) = scl_real()->setreuid;

    before_becoming(euid);
    return real != NULL ? real(ruid, euid) : unavailable();
}

SCL_EXPORT int setresuid(uid_t ruid, uid_t euid, uid_t suid)
{
    int (*real)(uid_t, uid_t, uid_t) = scl_real()->setresuid;

    before_becoming(euid);
    return real != NULL ? real(ruid, euid, suid) : unavailable();
}

SCL_EXPORT int chroot(const char *path)
{
    int (*real)(const char *) = scl_real()->chroot;
    int saved = errno;

    scl_lifecycle_init();
    (void)scl_proc_self(); /* cached for this pid: /proc is gone after */
    errno = saved;
    return real != NULL ? real(path) : unavailable();
}
