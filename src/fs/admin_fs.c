/* SPDX-License-Identifier: MIT */
/* What the filesystem store does for the tools (store_admin.h): it
 * reads its claim directories (inventory.c), chooses those a command
 * works on (select_fs.c), and acts on them below with the library's own
 * clearing, forced release, word into a page of times and joining,
 * saying what it did through the tool's printers. */
#include "config.h"

#include "budget.h"
#include "claim.h"
#include "dir.h"
#include "history.h"
#include "holder.h"
#include "inventory.h"
#include "layout.h"
#include "member.h"
#include "retire.h"
#include "settings.h"
#include "sigsafe.h"
#include "store_admin.h"
#include "times.h"
#include "wake.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char inv_claims_dir[] = SCL_CLAIMS_DIR, inv_wake_file[] = SCL_WAKE_FILE;

int inv_is_dir_name(const char *name)
{
    return scl_after_prefix(name, SCL_DIR_PREFIX) != NULL;
}

/* What one run of a tool reads, in all its clearings, searching for
 * links the journals did not name: a directory may hold any number of
 * dead holders, each with links planted outside it. */
static struct scl_budget tool_clearing = { "a tool's clearing of dead holders", SCL_BUDGET_REMOVAL_ENTRIES,
                                           SCL_BUDGET_REMOVAL_ENTRIES, 0 };

/* The tools write a directory's history only when it is their user's
 * own (history.h): another's owner could truncate it under the mapping. */
/* Clears the claims and the holder file of member PID of the directory
 * open as CLAIMS_FD and TOP_FD (inv_open_dir()), as the library clears a
 * dead holder: under its holder file's lock, and only while it is dead,
 * its holds recorded as cleared in the directory's history when it is
 * this user's.  0; 1 when the run's search for links their journals did
 * not name has gone past SCL_BUDGET_REMOVAL_ENTRIES (the claims left are
 * a dead holder's: anybody's next acquire of them clears them); or -1
 * with errno. */
static int clear_dead(int claims_fd, int top_fd, pid_t pid)
{
    struct scl_hold_end end = { scl_history_open(top_fd), SCL_HOLD_CLEARED, 0 };
    int r = scl_holder_clear(claims_fd, top_fd, pid, SCL_CLEAR_IF_DEAD, &end, &tool_clearing);

    scl_history_unmap(end.history);
    return r < 0 ? -1 : tool_clearing.gave_up;
}

/* Tells every holder of the directory open as CLAIMS_FD and TOP_FD that a
 * claim may have been taken from it (each checks whose a name is before
 * its next release), then unlinks claim C while it is still the link the
 * tool looked at, and records the hold of HOLDER (its pid, 0 unknown)
 * forced in the directory's history when it is this user's.  0, or -1
 * with errno (ESTALE: it was released and taken again meanwhile); *TOLD
 * is 0 when the holders could not be told (and nothing was unlinked). */
static int release_forced_at(int claims_fd, int top_fd, const struct inv_claim *c, pid_t holder, int *told)
{
    struct scl_hold_end end = { NULL, SCL_HOLD_FORCED, 0 };

    /* The holder is told first (wake.h): its late release must then
     * check whose the name is. */
    *told = scl_wake_revoke(top_fd) == 0;
    if (!*told || scl_claim_remove_if_same(claims_fd, c->fname, c->dev, c->ino) != 0)
        return -1;
    if (holder > 0 && (end.history = scl_history_open(top_fd)) != NULL) {
        (void)scl_history_end(end.history, c->fname, holder, &end);
        scl_history_unmap(end.history);
    }
    return 0;
}

/* gc: removes what is dead in directory D (says what it would remove,
 * when DRY), counting in *REMOVED: 1 when something could not be, else
 * 0. */
static int collect_dir(const struct inv_dir *d, int dry, size_t *removed)
{
    const char *verb = dry ? "would remove" : "removed";
    static int searched_enough;
    int fd, top_fd, failed = 0, r;

    fd = inv_open_dir(d->path, &top_fd);
    if (fd < 0) {
        scl_admin_report("%s/%s: %s", d->path, inv_claims_dir, strerror(errno));
        return 1;
    }
    for (size_t j = 0; j < d->nprocs; j++) {
        const struct inv_proc *p = &d->procs[j];
        if (p->state == SCL_PROC_ALIVE)
            continue;
        /* The same race-free clearing the library does: under the
         * holder's flock, and only while it is dead.  Said once done. */
        if (!dry && (r = clear_dead(fd, top_fd, p->pid)) < 0) {
            scl_admin_report("clearing process %d in %s: %s", (int)p->pid, d->path, strerror(errno));
            failed = 1;
            continue;
        }
        if (!dry && r > 0 && !searched_enough++)
            scl_admin_report("%s: dead holders' links outside their journals are left past this run's bound of %u "
                             "entries read (anybody's next acquire of such a name clears it)",
                             d->path, SCL_BUDGET_REMOVAL_ENTRIES);
        for (size_t k = p->claim0; k < p->claim0 + p->nheld; k++)
            scl_admin_say("%s claim %s of dead process %d in %s", verb, d->claims[k].name, (int)p->pid, d->path);
        scl_admin_say("%s holder file of dead process %d in %s", verb, (int)p->pid, d->path);
        (*removed)++;
    }
    close(fd);
    close(top_fd);
    if (!d->live) {
        if (!dry && scl_retire_path(d->path, 0, 0, SCL_RETIRE_ALL) != 0) {
            scl_admin_report("removing %s: %s", d->path, strerror(errno));
            failed = 1;
        } else {
            scl_admin_say("%s abandoned directory %s", verb, d->path);
            (*removed)++;
        }
    }
    return failed;
}

static int collect(const struct scl_admin_dirs *dirs, int dry, size_t *removed)
{
    int failed = 0;

    for (size_t i = 0; i < dirs->n; i++)
        failed |= collect_dir(&dirs->dir[i], dry, removed);
    return failed;
}

/* What came of telling the members of one directory to drain. */
struct told {
    size_t told, untold; /* untold: no page of times to be told in */
    int failed;          /* one could not be told (said) */
};

/* Tells process P of directory D, open as TOP_FD, through its page of
 * times (only a process that took a claim has one). */
static void tell(const struct inv_dir *d, const struct inv_proc *p, int top_fd, struct told *t)
{
    if (scl_times_tell_draining(top_fd, p->pid, SCL_TOLD_BY_OPERATOR) == 0) {
        scl_admin_say("told process %d (%s) to drain, in %s", (int)p->pid, p->command, d->path);
        t->told++;
    } else if (errno == ENOENT) {
        scl_admin_report("process %d (%s) has taken no claim, so it has no page of times to be told in: not told",
                         (int)p->pid, p->command);
        t->untold++;
    } else {
        scl_admin_report("cannot tell process %d (%s) in %s: %s%s", (int)p->pid, p->command, d->path, strerror(errno),
                         errno == EACCES || errno == EPERM ? " (run this as root or as its user)" : "");
        t->failed = 1;
    }
}

/* Tells the live members of directory D (only PID, when not 0). */
static void tell_dir(const struct inv_dir *d, pid_t pid, struct told *t)
{
    int top_fd, fd = inv_open_dir(d->path, &top_fd);

    if (fd < 0) {
        scl_admin_report("%s: %s", d->path, strerror(errno));
        t->failed = 1;
        return;
    }
    for (size_t j = 0; j < d->nprocs; j++) {
        const struct inv_proc *p = &d->procs[j];
        if (pid != 0 && p->pid != pid)
            continue;
        if (p->state == SCL_PROC_ALIVE) {
            tell(d, p, top_fd, t);
        } else if (pid != 0) {
            scl_admin_report("process %d has ended: nothing to tell", (int)pid);
            t->failed = 1;
        }
    }
    close(fd);
    close(top_fd);
}

static int tell_draining(const struct scl_admin_dirs *dirs, long pid)
{
    struct told t = { 0, 0, 0 };

    for (size_t i = 0; i < dirs->n; i++)
        tell_dir(&dirs->dir[i], (pid_t)pid, &t);
    if (pid != 0 && t.told + t.untold == 0 && !t.failed)
        scl_admin_report("process %d is not a member of %s", (int)pid,
                         dirs->n > 0 ? dirs->dir[0].path : "that directory");
    return t.told > 0 && !t.failed ? 0 : -1;
}

/* The one claim named NAME among DIRS, in *DIR and *FOUND: 0, or -1
 * when there is none, or more than one (said). */
static int find_claim(const struct scl_admin_dirs *dirs, const char *name, const char *server,
                      const struct inv_dir **dir, const struct inv_claim **found)
{
    *found = NULL;
    for (size_t i = 0; i < dirs->n; i++)
        for (size_t j = 0; j < dirs->dir[i].nclaims; j++)
            if (strcmp(dirs->dir[i].claims[j].name, name) == 0) {
                if (*found != NULL) {
                    scl_admin_report("'%s' is held in %s and in %s: say which with --server",
                                     scl_admin_shown_name(name), (*dir)->path, dirs->dir[i].path);
                    return -1;
                }
                *found = &dirs->dir[i].claims[j];
                *dir = &dirs->dir[i];
            }
    if (*found == NULL) {
        scl_admin_report("no claim named '%s'%s%s", scl_admin_shown_name(name), server ? " in " : "",
                         server ? server : "");
        return -1;
    }
    return 0;
}

/* Releases claim FOUND, named NAME, of directory DIR: 0, or -1 (said). */
static int release_in_dir(const struct inv_dir *dir, const struct inv_claim *found, const char *name)
{
    int top_fd, told = 1, r = 0, fd = inv_open_dir(dir->path, &top_fd);
    pid_t holder = found->holder >= 0 ? dir->procs[found->holder].pid : 0;

    /* Only the claim we looked at goes: one taken since stays. */
    if (fd >= 0 && release_forced_at(fd, top_fd, found, holder, &told) == 0) {
        scl_admin_say("released '%s' in %s", scl_admin_shown_name(name), dir->path);
    } else if (!told) {
        scl_admin_report("releasing '%s' in %s: cannot tell its holder through %s/%s"
                         " (%s): run this as root or as the directory's owner",
                         scl_admin_shown_name(name), dir->path, dir->path, inv_wake_file, strerror(errno));
        r = -1;
    } else {
        scl_admin_report("releasing '%s' in %s: %s", scl_admin_shown_name(name), dir->path,
                         errno == ESTALE ? "it was released and taken again meanwhile" : strerror(errno));
        r = -1;
    }
    if (fd >= 0) {
        close(fd);
        close(top_fd);
    }
    return r;
}

/* Warns that live holder P of NAME believes it still holds it, as what
 * it is: running, or stopped (by hand, or by a debugger tracing it). */
static void warn_holder(const struct inv_proc *p, const char *name)
{
    pid_t tracer = p->stopped ? scl_proc_read_tracer(p->pid) : 0;

    if (!p->stopped)
        scl_admin_report("WARNING: process %d (%s) is alive and believes it holds '%s'; releasing it anyway",
                         (int)p->pid, p->command, scl_admin_shown_name(name));
    else if (tracer > 0)
        scl_admin_report("WARNING: process %d (%s) is stopped, traced by process %d (a debugger?), and believes it "
                         "holds '%s'; releasing it anyway",
                         (int)p->pid, p->command, (int)tracer, scl_admin_shown_name(name));
    else
        scl_admin_report("WARNING: process %d (%s) is stopped ('kill -CONT %d' lets it go on) and believes it holds "
                         "'%s'; releasing it anyway",
                         (int)p->pid, p->command, (int)p->pid, scl_admin_shown_name(name));
}

static int release_forced(const struct scl_admin_dirs *dirs, const char *name, const char *server)
{
    const struct inv_dir *dir = NULL;
    const struct inv_claim *found;

    if (find_claim(dirs, name, server, &dir, &found) != 0)
        return -1;
    if (found->holder >= 0 && dir->procs[found->holder].state == SCL_PROC_ALIVE)
        warn_holder(&dir->procs[found->holder], name);
    return release_in_dir(dir, found, name);
}

static int join(const char *base, const char *name)
{
    return scl_dir_use_named(base, name);
}

static int join_environment(char *out, size_t cap)
{
    const char *path = scl_settings()->claim_dir;

    if (path[0] == '\0')
        return 0;
    snprintf(out, cap, "%s", path);
    return scl_dir_use_environment(path) == 0 ? 1 : -1;
}

static void holder(const char *path, const char *name, char *out, size_t cap)
{
    struct inv_dir d;

    out[0] = '\0';
    if (inv_load_dir(path, &d, NULL) != 0)
        return;
    for (size_t i = 0; i < d.nclaims; i++)
        if (strcmp(d.claims[i].name, name) == 0 && d.claims[i].holder >= 0) {
            const struct inv_proc *p = &d.procs[d.claims[i].holder];
            snprintf(out, cap, ", held by process %d (%s)", (int)p->pid, p->command);
        }
    inv_free_dir(&d);
}

static size_t count(const struct scl_admin_dirs *dirs)
{
    return dirs->n;
}

static void free_dirs(struct scl_admin_dirs *dirs)
{
    if (dirs == NULL)
        return;
    inv_free(dirs->dir, dirs->n);
    free(dirs);
}

static const struct scl_admin_directories directories = {
    .load = inv_load_selected,
    .count = count,
    .free = free_dirs,
    .looked = inv_places_looked,
    .select = inv_select_dir,
    .only_server = inv_only_server,
    .run_namespace = inv_run_namespace,
    .join = join,
    .join_environment = join_environment,
    .holder = holder,
    .collect = collect,
    .tell_draining = tell_draining,
    .release_forced = release_forced,
};

/* A claim in a directory outlives an exec as it is: its holder file is
 * the process's, whatever image it runs.  That file says the image is
 * exec'd (list's ROLE), as an image that loads the shim says it when it
 * registers: run's command seldom does. */
static int keep_across_exec(void)
{
    int claims_fd = scl_dir_claims_fd();

    if (claims_fd >= 0)
        scl_member_note_execd(claims_fd);
    return 0;
}

/* No server to have said anything. */
static const char *no_reason(void)
{
    return NULL;
}

extern const struct scl_admin_listing scl_fs_listing, scl_fs_history; /* listing_fs.c, history_fs.c */

const struct scl_store_admin scl_store_fs_admin = {
    .name = "filesystem",
    .can = SCL_ADMIN_DIRECTORIES,
    .listing = &scl_fs_listing,
    .history = &scl_fs_history,
    .keep_across_exec = keep_across_exec,
    .reason = no_reason,
    .directories = &directories,
};
