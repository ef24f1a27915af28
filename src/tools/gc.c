/* swerve-claim gc: remove the claims of dead holders and the claim
 * directories nobody uses any more, with the library's own race-free
 * clearing. */
#include "config.h"

#include "budget.h"
#include "inventory.h"
#include "store_admin.h"
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Removes what is dead in directory D (says what it would remove, when
 * DRY), counting in *REMOVED: 1 when something could not be, else 0. */
static int collect_dir(const struct inv_dir *d, int dry, size_t *removed)
{
    const char *verb = dry ? "would remove" : "removed";
    static int searched_enough;
    int fd, topfd, failed = 0, r;

    fd = inv_open_dir(d->path, &topfd);
    if (fd < 0) {
        tool_error("%s/%s: %s", d->path, inv_claims_dir, strerror(errno));
        return 1;
    }
    for (size_t j = 0; j < d->nprocs; j++) {
        const struct inv_proc *p = &d->procs[j];
        if (p->state == SCL_PROC_ALIVE)
            continue;
        /* The same race-free clearing the library does: under the
         * holder's flock, and only while it is dead.  Said once done. */
        if (!dry && (r = inv_clear_dead(fd, topfd, p->pid)) < 0) {
            tool_error("clearing process %d in %s: %s", (int)p->pid, d->path, strerror(errno));
            failed = 1;
            continue;
        }
        if (!dry && r > 0 && !searched_enough++)
            tool_error("%s: dead holders' links outside their journals are left past this run's bound of %u "
                       "entries read (anybody's next acquire of such a name clears it)",
                       d->path, SCL_BUDGET_REMOVAL_ENTRIES);
        for (size_t k = p->claim0; k < p->claim0 + p->nheld; k++)
            tool_say("%s claim %s of dead process %d in %s", verb, d->claims[k].name, (int)p->pid, d->path);
        tool_say("%s holder file of dead process %d in %s", verb, (int)p->pid, d->path);
        (*removed)++;
    }
    close(fd);
    close(topfd);
    if (!d->live) {
        if (!dry && inv_remove_dir(d->path) != 0) {
            tool_error("removing %s: %s", d->path, strerror(errno));
            failed = 1;
        } else {
            tool_say("%s abandoned directory %s", verb, d->path);
            (*removed)++;
        }
    }
    return failed;
}

int tool_gc(int argc, char **argv)
{
    static const struct option opts[] = {
        { "dry-run", no_argument, NULL, 'd' },
        { "server", required_argument, NULL, 's' },
        TOOL_BASE_OPTION,
        { NULL, 0, NULL, 0 },
    };
    const char *server = NULL;
    int dry = 0, c, failed, loaded;
    struct inv_dir *dirs;
    size_t n, removed = 0;

    while ((c = tool_getopt(argc, argv, "ds:", opts)) != -1) {
        switch (c) {
        case 'd': dry = 1; break;
        case 's': server = optarg; break;
        default: return TOOL_USAGE;
        }
    }
    if (optind != argc)
        return tool_usage_error("gc takes no arguments");
    if (scl_store_admin()->can & SCL_ADMIN_SESSIONS) {
        tool_say(
            "nothing to collect: with SWERVE_CLAIM_STORE, the server frees a claim when its holder's session ends");
        return TOOL_OK;
    }
    if ((loaded = tool_load_selected(server, 0, &dirs, &n)) < 0)
        return TOOL_FAILURE;
    failed = loaded > 0; /* a directory not read: said */
    for (size_t i = 0; i < n; i++)
        failed |= collect_dir(&dirs[i], dry, &removed);
    if (removed == 0)
        tool_say("nothing to remove");
    inv_free(dirs, n);
    /* --dry-run drives monitoring, as diff(1) does: 1 means "stale things found". */
    return failed || (dry && removed > 0) ? TOOL_FAILURE : TOOL_OK;
}
