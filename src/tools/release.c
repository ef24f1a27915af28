/* swerve-claim release --force: remove one claim by hand, whoever holds
 * it, loudly when its holder is alive; its holder is told (wake.h). */
#include "config.h"

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

/* A claim of a shared store goes with its holder's session: every claim
 * that session holds goes too, and the holder is told only by held(). */
static int release_in_store(const char *name)
{
    struct scl_listed who;
    char session[200], says[300], what[100], token[40];
    int r = scl_store_admin()->end_holder(name, &who);

    if (r < 0) {
        snprintf(what, sizeof what, "releasing '%s'", name);
        tool_store_error(what, errno == EACCES ? " (ending another role's session needs pg_signal_backend)" : "");
        return TOOL_FAILURE;
    }
    if (r == 0) {
        tool_error("no claim named '%s' in scope '%s'", name, scl_store_admin()->scope());
        return TOOL_FAILURE;
    }
    tool_listed_session(&who, session, sizeof session);
    tool_listed_says(&who, says, sizeof says);
    /* The database knows a hold's token only once the holder asked for
     * it (swerve_claim_token()): never make one up. */
    if (who.token > 0)
        snprintf(token, sizeof token, "token %llu", (unsigned long long)who.token);
    else
        snprintf(token, sizeof token, "its token unknown");
    tool_error("WARNING: ended the database %s, which held '%s' (%s): every claim of that session is "
               "released; %s, and may still be running",
               session, name, token, says);
    tool_say("released '%s' in scope '%s'", name, scl_store_admin()->scope());
    return TOOL_OK;
}

/* The one claim named NAME among the N directories DIRS, in *DIR and
 * *FOUND: TOOL_OK, or TOOL_FAILURE when there is none, or more than one
 * (said). */
static int find_claim(struct inv_dir *dirs, size_t n, const char *name, const char *server, struct inv_dir **dir,
                      struct inv_claim **found)
{
    *found = NULL;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < dirs[i].nclaims; j++)
            if (strcmp(dirs[i].claims[j].name, name) == 0) {
                if (*found != NULL) {
                    tool_error("'%s' is held in %s and in %s: say which with --server", name, (*dir)->path,
                               dirs[i].path);
                    return TOOL_FAILURE;
                }
                *found = &dirs[i].claims[j];
                *dir = &dirs[i];
            }
    if (*found == NULL) {
        tool_error("no claim named '%s'%s%s", name, server ? " in " : "", server ? server : "");
        return TOOL_FAILURE;
    }
    return TOOL_OK;
}

/* Releases claim FOUND, named NAME, of directory DIR. */
static int release_in_dir(const struct inv_dir *dir, const struct inv_claim *found, const char *name)
{
    int topfd, told = 1, r = TOOL_OK, fd = inv_open_dir(dir->path, &topfd);
    pid_t holder = found->holder >= 0 ? dir->procs[found->holder].pid : 0;

    /* Only the claim we looked at goes: one taken since stays. */
    if (fd >= 0 && inv_release_forced(fd, topfd, found, holder, &told) == 0) {
        tool_say("released '%s' in %s", name, dir->path);
    } else if (!told) {
        tool_error("releasing '%s' in %s: cannot tell its holder through %s/%s"
                   " (%s): run this as root or as the directory's owner",
                   name, dir->path, dir->path, inv_wake_file, strerror(errno));
        r = TOOL_FAILURE;
    } else {
        tool_error("releasing '%s' in %s: %s", name, dir->path,
                   errno == ESTALE ? "it was released and taken again meanwhile" : strerror(errno));
        r = TOOL_FAILURE;
    }
    if (fd >= 0) {
        close(fd);
        close(topfd);
    }
    return r;
}

/* Warns that live holder P of NAME believes it still holds it, as what
 * it is: running, or stopped (by hand, or by a debugger tracing it). */
static void warn_holder(const struct inv_proc *p, const char *name)
{
    pid_t tracer = p->stopped ? scl_proc_read_tracer(p->pid) : 0;

    if (!p->stopped)
        tool_error("WARNING: process %d (%s) is alive and believes it holds '%s'; releasing it anyway", (int)p->pid,
                   p->command, name);
    else if (tracer > 0)
        tool_error("WARNING: process %d (%s) is stopped, traced by process %d (a debugger?), and believes it holds "
                   "'%s'; releasing it anyway",
                   (int)p->pid, p->command, (int)tracer, name);
    else
        tool_error("WARNING: process %d (%s) is stopped ('kill -CONT %d' lets it go on) and believes it holds '%s'; "
                   "releasing it anyway",
                   (int)p->pid, p->command, (int)p->pid, name);
}

int tool_release(int argc, char **argv)
{
    static const struct option opts[] = {
        { "force", no_argument, NULL, 'f' },
        { "server", required_argument, NULL, 's' },
        TOOL_BASE_OPTION,
        { NULL, 0, NULL, 0 },
    };
    const char *server = NULL, *name;
    struct inv_dir *dirs, *found_dir = NULL;
    struct inv_claim *found = NULL;
    int force = 0, c, r = TOOL_OK;
    size_t n;

    while ((c = tool_getopt(argc, argv, "fs:", opts)) != -1) {
        switch (c) {
        case 'f': force = 1; break;
        case 's': server = optarg; break;
        default: return TOOL_USAGE;
        }
    }
    if (optind != argc - 1)
        return tool_usage_error("release takes one claim NAME");
    if (!force)
        return tool_usage_error("release removes a claim behind its holder's back: say --force");
    name = argv[optind];
    if (tool_check_name(name) != 0 || tool_check_store_options(server, NULL) != 0)
        return TOOL_USAGE;
    if (scl_store_admin()->can & SCL_ADMIN_SESSIONS)
        return release_in_store(name);
    if (tool_load_selected(server, 0, &dirs, &n) < 0)
        return TOOL_FAILURE;
    r = find_claim(dirs, n, name, server, &found_dir, &found);
    if (r == TOOL_OK) {
        if (found->holder >= 0 && found_dir->procs[found->holder].state == SCL_PROC_ALIVE)
            warn_holder(&found_dir->procs[found->holder], name);
        r = release_in_dir(found_dir, found, name);
    }
    inv_free(dirs, n);
    return r;
}
