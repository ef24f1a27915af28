/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "acl.h"
#include "holder.h"
#include "sigsafe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

/* The kernel's xattr form of an ACL (linux/posix_acl_xattr.h). */
#define ACL_XATTR   "system.posix_acl_access"
#define ACL_VERSION 2
enum {
    TAG_USER_OBJ = 0x01,
    TAG_USER = 0x02,
    TAG_GROUP_OBJ = 0x04,
    TAG_GROUP = 0x08,
    TAG_MASK = 0x10,
    TAG_OTHER = 0x20
};
#define MAX_ENTRIES 64
#define NO_ID       0xffffffffu

struct entry {
    uint16_t tag, perm;
    uint32_t id;
};

struct acl {
    uint32_t version;
    struct entry e[MAX_ENTRIES];
};

/* Reads FD's ACL, or makes the one its mode stands for; returns the
 * number of entries, or -1. */
static int read_acl(int fd, struct acl *acl)
{
    ssize_t size = fgetxattr(fd, ACL_XATTR, acl, sizeof *acl);
    struct stat st;

    if (size >= (ssize_t)sizeof acl->version)
        return (int)((size_t)(size - (ssize_t)sizeof acl->version) / sizeof(struct entry));
    if (size < 0 && errno != ENODATA)
        return -1;
    if (fstat(fd, &st) != 0)
        return -1;
    acl->version = ACL_VERSION;
    acl->e[0] = (struct entry){ TAG_USER_OBJ, (uint16_t)(st.st_mode >> 6 & 7), NO_ID };
    acl->e[1] = (struct entry){ TAG_GROUP_OBJ, (uint16_t)(st.st_mode >> 3 & 7), NO_ID };
    acl->e[2] = (struct entry){ TAG_OTHER, (uint16_t)(st.st_mode & 7), NO_ID };
    return 3;
}

/* Adds user UID with PERM (and a mask that lets it through), keeping the
 * entries in the order the kernel demands: by tag, then by id. */
static int add_user(struct acl *acl, int n, uint32_t uid, uint16_t perm)
{
    int at = 0, has_mask = 0;

    for (int i = 0; i < n; i++) {
        if (acl->e[i].tag == TAG_USER && acl->e[i].id == uid && (acl->e[i].perm & perm) == perm)
            return n; /* there already */
        has_mask |= acl->e[i].tag == TAG_MASK;
    }
    if (n + 2 > MAX_ENTRIES) {
        errno = ENOSPC;
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (acl->e[i].tag == TAG_USER && acl->e[i].id == uid) {
            acl->e[i].perm |= perm;
            at = -1;
            break;
        }
        if (acl->e[i].tag < TAG_USER || (acl->e[i].tag == TAG_USER && acl->e[i].id < uid))
            at = i + 1;
    }
    if (at >= 0) {
        memmove(&acl->e[at + 1], &acl->e[at], (size_t)(n - at) * sizeof acl->e[0]);
        acl->e[at] = (struct entry){ TAG_USER, perm, uid };
        n++;
    }
    for (int i = 0; i < n; i++)
        if (acl->e[i].tag == TAG_MASK)
            acl->e[i].perm |= perm;
    if (!has_mask) {
        /* The mask goes just before OTHER, the last entry. */
        int other = n - 1;
        uint16_t group = 0;
        for (int i = 0; i < n; i++)
            if (acl->e[i].tag == TAG_GROUP_OBJ || acl->e[i].tag == TAG_GROUP || acl->e[i].tag == TAG_USER)
                group |= acl->e[i].perm;
        memmove(&acl->e[other + 1], &acl->e[other], sizeof acl->e[0]);
        acl->e[other] = (struct entry){ TAG_MASK, group, NO_ID };
        n++;
    }
    return n;
}

static int grant_fd(int fd, uint32_t uid, uint16_t perm)
{
    struct acl acl;
    int n = read_acl(fd, &acl);

    if (n < 0 || (n = add_user(&acl, n, uid, perm)) < 0)
        return -1;
    return fsetxattr(fd, ACL_XATTR, &acl, sizeof acl.version + (size_t)n * sizeof acl.e[0], 0);
}

/*
 * The wake file is left out on purpose: whoever may write it may truncate
 * it, and every process that has it mapped would die of SIGBUS at its next
 * wake-up.  A forked worker inherits its master's mapping and needs no
 * access to the file; a worker that execs waits with its 20 ms retries.
 */
int scl_acl_grant(int top_fd, int claims_fd, uid_t uid)
{
    if (grant_fd(claims_fd, (uint32_t)uid, 7) == 0)
        return grant_fd(top_fd, (uint32_t)uid, 7);
    if (errno != EOPNOTSUPP)
        return -1;
    /* Without ACLs (a filesystem mounted without them), the directory is
     * handed to that user instead: root keeps its access through its
     * capabilities, but a second worker user would take it from the first. */
    return fchown(claims_fd, uid, (gid_t)-1) == 0 ? fchown(top_fd, uid, (gid_t)-1) : -1;
}

int scl_acl_give(int top_fd, uid_t uid, int holder_fd, int top_too)
{
    if (holder_fd >= 0 && fchown(holder_fd, uid, (gid_t)-1) != 0)
        return -1;
    return top_too ? fchown(top_fd, uid, (gid_t)-1) : 0;
}
