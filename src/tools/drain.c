/* swerve-claim drain: tells a server's processes, or one of them, that
 * they are being drained, as a reload would: their swerve_claim_draining()
 * says 1 from then on, and a holder that asks it lets go.  The word goes
 * into each one's page of times (the filesystem store's), which only a
 * process that took a claim has; nothing else of the server changes. */
#include "config.h"

#include "inventory.h"
#include "store_admin.h"
#include "tool.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* What came of telling the members of one directory. */
struct told {
    size_t told, untold; /* untold: no page of times to be told in */
    int failed;          /* one could not be told (said) */
};

/* Tells process P of directory D, open as TOPFD. */
static void tell(const struct inv_dir *d, const struct inv_proc *p, int topfd, struct told *t)
{
    if (inv_tell_draining(topfd, p->pid) == 0) {
        tool_say("told process %d (%s) to drain, in %s", (int)p->pid, p->command, d->path);
        t->told++;
    } else if (errno == ENOENT) {
        tool_error("process %d (%s) has taken no claim, so it has no page of times to be told in: not told",
                   (int)p->pid, p->command);
        t->untold++;
    } else {
        tool_error("cannot tell process %d (%s) in %s: %s%s", (int)p->pid, p->command, d->path, strerror(errno),
                   errno == EACCES || errno == EPERM ? " (run this as root or as its user)" : "");
        t->failed = 1;
    }
}

/* Tells the live members of directory D (only PID, when not 0). */
static void tell_dir(const struct inv_dir *d, pid_t pid, struct told *t)
{
    int topfd, fd = inv_open_dir(d->path, &topfd);

    if (fd < 0) {
        tool_error("%s: %s", d->path, strerror(errno));
        t->failed = 1;
        return;
    }
    for (size_t j = 0; j < d->nprocs; j++) {
        const struct inv_proc *p = &d->procs[j];
        if (pid != 0 && p->pid != pid)
            continue;
        if (p->state == SCL_PROC_ALIVE) {
            tell(d, p, topfd, t);
        } else if (pid != 0) {
            tool_error("process %d has ended: nothing to tell", (int)pid);
            t->failed = 1;
        }
    }
    close(fd);
    close(topfd);
}

int tool_drain(int argc, char **argv)
{
    static const struct option opts[] = {
        { "server", required_argument, NULL, 's' },
        { "pid", required_argument, NULL, 'p' },
        TOOL_BASE_OPTION,
        { NULL, 0, NULL, 0 },
    };
    const char *server = NULL, *host = NULL;
    struct told t = { 0, 0, 0 };
    struct inv_dir *dirs;
    char member[24];
    pid_t pid = 0;
    size_t n;
    int c;

    while ((c = tool_getopt(argc, argv, "s:p:", opts)) != -1) {
        switch (c) {
        case 's': server = optarg; break;
        case 'p':
            if (tool_parse_pid(optarg, &pid, &host) != 0)
                return TOOL_USAGE;
            break;
        default: return TOOL_USAGE;
        }
    }
    if (optind != argc)
        return tool_usage_error("drain takes no arguments but its options");
    if (server == NULL && pid == 0)
        return tool_usage_error("drain tells a server's processes to let go: say which with --server PID|DIR, "
                                "or one process with --pid PID");
    if (!(scl_store_admin()->can & SCL_ADMIN_DIRECTORIES))
        return tool_usage_error("drain works on local claim directories: with SWERVE_CLAIM_STORE, a worker learns "
                                "that it drains from its master alone");
    if (tool_check_store_options(server, host) != 0)
        return TOOL_USAGE;
    /* -p alone: the one directory PID is a member of, as --server PID
     * finds it (never one that merely names it). */
    snprintf(member, sizeof member, "%d", (int)pid);
    if (tool_load_selected(server != NULL ? server : member, 0, &dirs, &n) < 0)
        return TOOL_FAILURE;
    for (size_t i = 0; i < n; i++)
        tell_dir(&dirs[i], pid, &t);
    if (pid != 0 && t.told + t.untold == 0 && !t.failed)
        tool_error("process %d is not a member of %s", (int)pid, n > 0 ? dirs[0].path : "that directory");
    inv_free(dirs, n);
    return t.told > 0 && !t.failed ? TOOL_OK : TOOL_FAILURE;
}
