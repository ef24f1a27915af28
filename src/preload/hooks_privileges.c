/* SPDX-License-Identifier: MIT */
/*
 * Privileges and chroot.  A root process about to become another user for
 * good first lets that user into the claim directory (acl.h): servers
 * fork their workers as root and drop privileges in them afterwards, and
 * uWSGI drops in its master, in a directory its root launcher made.  A process
 * about to chroot reads its start time while /proc is still there, and
 * opens the claim directory (making it where its server reserved it): its
 * descriptor keeps working inside the chroot, its path does not.
 *
 * setgid(), setgroups() and initgroups() need nothing: access is granted
 * per user.
 */
#include "config.h"

#include "export.h"
#include "lifecycle.h"
#include "proc.h"
#include "real.h"
#include "store.h"

#include <errno.h>
#include <unistd.h>

/*
 * Before the call that will make real, effective and saved uid all NEW
 * (a process that cannot come back): lets NEW into the claim directory,
 * and hands it what this process must still write there.  A switch of
 * the effective uid alone (seteuid(u) ... seteuid(0)) changes nothing: it
 * would leave u a way in for good.
 */
static void before_becoming(uid_t new_ruid, uid_t new_euid, uid_t new_suid)
{
    int saved = errno;

    scl_lifecycle_init();
    if (new_ruid == new_euid && new_euid == new_suid && new_euid != 0 && geteuid() == 0)
        scl_store()->becoming_user(new_euid);
    errno = saved;
}

/* What an argument of -1 leaves as it is. */
static uid_t or_now(uid_t wanted, uid_t now)
{
    return wanted == (uid_t)-1 ? now : wanted;
}

SCL_EXPORT int setuid(uid_t uid)
{
    int (*real)(uid_t) = scl_real()->setuid;

    /* With root's privileges, setuid() sets all three. */
    before_becoming(uid, uid, uid);
    return real != NULL ? real(uid) : scl_real_missing();
}

SCL_EXPORT int setreuid(uid_t ruid, uid_t euid)
{
    int (*real)(uid_t, uid_t) = scl_real()->setreuid;
    uid_t r, e, s;

    if (getresuid(&r, &e, &s) == 0) {
        /* The saved uid follows the new effective one when the real one
         * is set, or the effective one set to other than the real one. */
        uid_t new_e = or_now(euid, e);
        before_becoming(or_now(ruid, r), new_e, ruid != (uid_t)-1 || (euid != (uid_t)-1 && euid != r) ? new_e : s);
    }
    return real != NULL ? real(ruid, euid) : scl_real_missing();
}

SCL_EXPORT int setresuid(uid_t ruid, uid_t euid, uid_t suid)
{
    int (*real)(uid_t, uid_t, uid_t) = scl_real()->setresuid;
    uid_t r, e, s;

    if (getresuid(&r, &e, &s) == 0)
        before_becoming(or_now(ruid, r), or_now(euid, e), or_now(suid, s));
    return real != NULL ? real(ruid, euid, suid) : scl_real_missing();
}

SCL_EXPORT int chroot(const char *path)
{
    int (*real)(const char *) = scl_real()->chroot;
    int saved = errno;

    scl_lifecycle_init();
    (void)scl_proc_self(); /* cached for this pid: /proc is gone after */
    scl_store()->before_chroot();
    errno = saved;
    return real != NULL ? real(path) : scl_real_missing();
}
