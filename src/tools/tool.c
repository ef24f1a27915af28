/*
 * swerve-claim - see who holds what, clear stale claims, run a command
 * while holding a claim.  The manual is doc/swerve-claim.1.
 *
 *   swerve-claim [--base DIR] list [--server PID|DIR] [--name NAME] [--json]
 *                                  [--raw] [--noheadings] [--output COLUMNS]
 *   swerve-claim [--base DIR] gc [--dry-run] [--server PID|DIR]
 *   swerve-claim [--base DIR] release --force [--server PID|DIR] NAME
 *   swerve-claim [--base DIR] run [--wait SECONDS] [--server PID|DIR]
 *                                 [--conflict-exit-code N] NAME -- COMMAND...
 */
#include "config.h"

#include "holder.h"
#include "inventory.h"
#include "retire.h"
#include "settings.h"
#include "sigsafe.h"
#include "tool.h"
#include "wake.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <libsmartcols/libsmartcols.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *tool_base;
int tool_base_explicit;

void tool_error(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "swerve-claim: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static int usage_error(const char *what)
{
    tool_error("%s (try 'swerve-claim --help')", what);
    return TOOL_USAGE;
}

static void help(void)
{
    printf("Usage: swerve-claim [--base DIR] COMMAND [OPTION...]\n"
           "\n"
           "See who holds which claim, clear stale claims, and run commands while\n"
           "holding a claim (libswerveclaim_preload.so).\n"
           "\n"
           "Commands:\n"
           "  list      every claim directory of yours, its processes and its claims\n"
           "  gc        remove the claims of dead holders and abandoned directories\n"
           "  release   remove one claim by hand (needs --force)\n"
           "  run       run a command while holding a claim, like flock(1)\n"
           "\n"
           "Options of list:\n"
           "  -s, --server PID|DIR     only the directory PID is a member of, or DIR\n"
           "  -n, --name NAME          only claims named NAME\n"
           "  -J, --json               JSON output\n"
           "  -r, --raw                raw output\n"
           "  -H, --noheadings         no header line\n"
           "  -o, --output LIST        columns: TYPE,NAME,PID,STATE,SINCE,COMMAND,DIR\n"
           "Options of gc:\n"
           "  -d, --dry-run            say what would be removed, remove nothing\n"
           "  -s, --server PID|DIR     only that directory\n"
           "Options of release:\n"
           "  -f, --force              required: release NAME whoever holds it\n"
           "  -s, --server PID|DIR     the directory (needed if NAME is in several)\n"
           "Options of run:\n"
           "  -w, --wait SECONDS       wait up to SECONDS for the claim (default: try once)\n"
           "  -s, --server PID|DIR     in that server's namespace (default: a namespace\n"
           "                           of your own, shared by all your `run`s)\n"
           "  -E, --conflict-exit-code N  exit status when the claim is not taken\n"
           "                           (default %d)\n"
           "\n"
           "Global options:\n"
           "  -b, --base DIR           where claim directories are (default $SWERVE_TMPDIR,\n"
           "                           $TMPDIR, /tmp)\n"
           "  -h, --help               this help\n"
           "  -V, --version            the version\n"
           "\n"
           "Exit status: 0 done; 1 a failure, said on standard error; 2 wrong usage;\n"
           "run: the command's status (128+N if killed by signal N), %d (or -E) if\n"
           "the claim was not taken, 126 if the command cannot run, 127 if not found.\n",
           TOOL_CONFLICT_DEFAULT, TOOL_CONFLICT_DEFAULT);
}

int tool_parse_exit_code(const char *s, int *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno != 0 || v < 0 || v > 255) {
        tool_error("exit code out of range (expected 0 to 255): '%s'", s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* Every claim directory below the base, and those of the user's own
 * `run` namespace when it lives elsewhere. */
static int load_all(struct inv_dir **dirs, size_t *n)
{
    char base[PATH_MAX], name[NAME_MAX + 1];
    struct inv_dir *more, *all;
    size_t nmore;

    if (inv_load(tool_base, dirs, n) != 0) {
        tool_error("%s: %s", tool_base, strerror(errno));
        return -1;
    }
    if (tool_run_namespace(base, sizeof base, name, sizeof name, 0) != 0 || strcmp(base, tool_base) == 0 ||
        inv_load(base, &more, &nmore) != 0)
        return 0;
    all = realloc(*dirs, (*n + nmore) * sizeof **dirs);
    if (all == NULL) {
        inv_free(more, nmore);
        return 0;
    }
    memcpy(all + *n, more, nmore * sizeof *more);
    free(more);
    *dirs = all;
    *n += nmore;
    return 0;
}

/* PATH (resolved) is a claim directory the caller may work on: this
 * user's, or any user's for root, and writable by no other user. */
static int check_dir(const char *given, const char *path)
{
    const char *name = strrchr(path, '/');
    struct stat st;

    if (lstat(path, &st) != 0) {
        tool_error("%s: %s", given, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode) || name == NULL || strncmp(name + 1, SCL_DIR_PREFIX, sizeof SCL_DIR_PREFIX - 1) != 0) {
        tool_error("%s: not a claim directory", given);
        return -1;
    }
    if ((st.st_uid != geteuid() && geteuid() != 0) || (st.st_mode & S_IWOTH) != 0) {
        tool_error("%s: not a claim directory of yours (owner uid %d, mode %o)", given, (int)st.st_uid,
                   (unsigned)(st.st_mode & 07777));
        return -1;
    }
    return 0;
}

int tool_select_dir(const char *server, char *out, size_t cap)
{
    struct inv_dir *dirs, *d;
    size_t n;
    char *end, resolved[PATH_MAX];
    long pid;

    if (strchr(server, '/') != NULL) {
        if (realpath(server, resolved) == NULL) {
            tool_error("%s: %s", server, strerror(errno));
            return -1;
        }
        if (check_dir(server, resolved) != 0)
            return -1;
        if (snprintf(out, cap, "%s", resolved) >= (int)cap) {
            tool_error("%s: %s", server, strerror(ENAMETOOLONG));
            return -1;
        }
        return 0;
    }
    errno = 0;
    pid = strtol(server, &end, 10);
    if (*end != '\0' || pid <= 0 || errno != 0) {
        tool_error("--server takes a pid or a directory path, not '%s'", server);
        return -1;
    }
    if (load_all(&dirs, &n) != 0)
        return -1;
    d = inv_find_member(dirs, n, (pid_t)pid);
    if (d == NULL) {
        tool_error("process %ld is not a live member of any claim directory in %s", pid, tool_base);
        inv_free(dirs, n);
        return -1;
    }
    snprintf(out, cap, "%s", d->path);
    inv_free(dirs, n);
    return 0;
}

/* The directories a command works on: one (--server) or all of ours. */
static int load_selected(const char *server, struct inv_dir **dirs, size_t *n)
{
    char path[PATH_MAX];

    if (server == NULL)
        return load_all(dirs, n);
    if (tool_select_dir(server, path, sizeof path) != 0)
        return -1;
    *dirs = calloc(1, sizeof **dirs);
    *n = 1;
    if (*dirs == NULL || inv_load_dir(path, *dirs) != 0) {
        tool_error("%s: %s", path, strerror(errno));
        free(*dirs);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ list */

enum column { COL_TYPE, COL_NAME, COL_PID, COL_STATE, COL_SINCE, COL_COMMAND, COL_DIR, NCOLUMNS };

static const struct {
    const char *name;
    double width;
    int flags, json;
} columns[NCOLUMNS] = {
    [COL_TYPE] = { "TYPE", 7, 0, SCOLS_JSON_STRING },
    [COL_NAME] = { "NAME", 0.3, SCOLS_FL_TREE, SCOLS_JSON_STRING },
    [COL_PID] = { "PID", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER },
    [COL_STATE] = { "STATE", 9, 0, SCOLS_JSON_STRING },
    [COL_SINCE] = { "SINCE", 19, 0, SCOLS_JSON_STRING },
    [COL_COMMAND] = { "COMMAND", 0.3, SCOLS_FL_TRUNC, SCOLS_JSON_STRING },
    [COL_DIR] = { "DIR", 0.2, 0, SCOLS_JSON_STRING },
};

struct row {
    const char *type, *name, *state, *command, *dir;
    pid_t pid;
    time_t since;
};

static void add_row(struct libscols_table *tb, struct libscols_line *ln, const int *shown, int nshown,
                    const struct row *r)
{
    char pid[24] = "", since[32] = "";

    if (r->pid > 0)
        snprintf(pid, sizeof pid, "%d", (int)r->pid);
    if (r->since > 0)
        strftime(since, sizeof since, "%Y-%m-%d %H:%M:%S", localtime(&r->since));
    (void)tb;
    for (int i = 0; i < nshown; i++) {
        const char *v = "";
        switch (shown[i]) {
        case COL_TYPE: v = r->type; break;
        case COL_NAME: v = r->name; break;
        case COL_PID: v = pid; break;
        case COL_STATE: v = r->state; break;
        case COL_SINCE: v = since; break;
        case COL_COMMAND: v = r->command; break;
        case COL_DIR: v = r->dir; break;
        }
        if (v != NULL && *v != '\0')
            scols_line_set_data(ln, (size_t)i, v);
    }
}

static int parse_output(const char *list, int *shown)
{
    char *copy = strdup(list), *tok, *save = NULL;
    int n = 0;

    for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int c = 0; c < NCOLUMNS; c++)
            if (strcasecmp(tok, columns[c].name) == 0)
                found = c;
        if (found < 0 || n == NCOLUMNS) {
            tool_error("unknown column '%s' (columns: TYPE,NAME,PID,STATE,SINCE,COMMAND,DIR)", tok);
            free(copy);
            return -1;
        }
        shown[n++] = found;
    }
    free(copy);
    return n;
}

static int list(int argc, char **argv)
{
    static const struct option opts[] = {
        { "server", required_argument, NULL, 's' }, { "name", required_argument, NULL, 'n' },
        { "json", no_argument, NULL, 'J' },         { "raw", no_argument, NULL, 'r' },
        { "noheadings", no_argument, NULL, 'H' },   { "output", required_argument, NULL, 'o' },
        { NULL, 0, NULL, 0 },
    };
    const char *server = NULL, *name = NULL;
    int json = 0, raw = 0, noheadings = 0, shown[NCOLUMNS] = { COL_TYPE, COL_NAME, COL_PID, COL_STATE, COL_SINCE, COL_COMMAND };
    int nshown = 6, c;
    struct libscols_table *tb;
    struct inv_dir *dirs;
    size_t n;

    while ((c = getopt_long(argc, argv, "+s:n:JrHo:", opts, NULL)) != -1) {
        switch (c) {
        case 's': server = optarg; break;
        case 'n': name = optarg; break;
        case 'J': json = 1; break;
        case 'r': raw = 1; break;
        case 'H': noheadings = 1; break;
        case 'o':
            if ((nshown = parse_output(optarg, shown)) < 0)
                return TOOL_USAGE;
            break;
        default: return usage_error("list: unknown option");
        }
    }
    if (optind != argc)
        return usage_error("list takes no arguments");
    if (load_selected(server, &dirs, &n) != 0)
        return TOOL_FAILURE;
    tb = scols_new_table();
    if (tb == NULL) {
        tool_error("out of memory");
        inv_free(dirs, n);
        return TOOL_FAILURE;
    }
    scols_table_enable_json(tb, json);
    scols_table_set_name(tb, "claims");
    scols_table_enable_raw(tb, raw);
    scols_table_enable_noheadings(tb, noheadings);
    for (int i = 0; i < nshown; i++) {
        /* Raw output is for scripts: flat, no tree art. */
        int flags = raw ? columns[shown[i]].flags & ~SCOLS_FL_TREE : columns[shown[i]].flags;
        struct libscols_column *col = scols_table_new_column(tb, columns[shown[i]].name, columns[shown[i]].width, flags);
        scols_column_set_json_type(col, columns[shown[i]].json);
    }
    for (size_t i = 0; i < n; i++) {
        struct inv_dir *d = &dirs[i];
        struct libscols_line *top = scols_table_new_line(tb, NULL);
        struct row r = { .type = "dir", .name = d->path, .state = d->live ? "live" : "abandoned", .dir = d->path };
        add_row(tb, top, shown, nshown, &r);
        for (size_t j = 0; j < d->nprocs && name == NULL; j++) {
            const struct inv_proc *p = &d->procs[j];
            struct row pr = { .type = "process", .pid = p->pid, .state = inv_state_name(p->state),
                              .command = p->command, .dir = d->path };
            add_row(tb, scols_table_new_line(tb, top), shown, nshown, &pr);
        }
        for (size_t j = 0; j < d->nclaims; j++) {
            const struct inv_claim *cl = &d->claims[j];
            const struct inv_proc *p = cl->holder >= 0 ? &d->procs[cl->holder] : NULL;
            struct row cr = { .type = "claim", .name = cl->name, .pid = p ? p->pid : 0,
                              .state = p ? inv_state_name(p->state) : "no-holder", .command = p ? p->command : "",
                              .since = cl->since, .dir = d->path };
            if (name == NULL || strcmp(name, cl->name) == 0)
                add_row(tb, scols_table_new_line(tb, top), shown, nshown, &cr);
        }
    }
    scols_print_table(tb);
    scols_unref_table(tb);
    inv_free(dirs, n);
    return TOOL_OK;
}

/* -------------------------------------------------------------- gc */

static int gc(int argc, char **argv)
{
    static const struct option opts[] = {
        { "dry-run", no_argument, NULL, 'd' }, { "server", required_argument, NULL, 's' }, { NULL, 0, NULL, 0 },
    };
    const char *server = NULL, *verb;
    int dry = 0, c, failed = 0;
    struct inv_dir *dirs;
    size_t n, removed = 0;

    while ((c = getopt_long(argc, argv, "+ds:", opts, NULL)) != -1) {
        switch (c) {
        case 'd': dry = 1; break;
        case 's': server = optarg; break;
        default: return usage_error("gc: unknown option");
        }
    }
    if (optind != argc)
        return usage_error("gc takes no arguments");
    if (load_selected(server, &dirs, &n) != 0)
        return TOOL_FAILURE;
    verb = dry ? "would remove" : "removed";
    for (size_t i = 0; i < n; i++) {
        struct inv_dir *d = &dirs[i];
        char claims[PATH_MAX + 16];
        int fd;

        snprintf(claims, sizeof claims, "%s/" SCL_CLAIMS_DIR, d->path);
        fd = open(claims, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) {
            tool_error("%s: %s", claims, strerror(errno));
            failed = 1;
            continue;
        }
        for (size_t j = 0; j < d->nprocs; j++) {
            const struct inv_proc *p = &d->procs[j];
            if (p->state == SCL_PROC_ALIVE)
                continue;
            for (size_t k = 0; k < d->nclaims; k++)
                if (d->claims[k].holder == (int)j)
                    printf("%s claim %s of dead process %d in %s\n", verb, d->claims[k].name, (int)p->pid, d->path);
            printf("%s holder file of dead process %d in %s\n", verb, (int)p->pid, d->path);
            /* The same race-free clearing the library does: under the
             * holder's flock, and only while it is dead. */
            if (!dry && scl_holder_clear(fd, p->pid, SCL_CLEAR_IF_DEAD) < 0) {
                tool_error("clearing process %d in %s: %s", (int)p->pid, d->path, strerror(errno));
                failed = 1;
            }
            removed++;
        }
        close(fd);
        if (!d->live) {
            printf("%s abandoned directory %s\n", verb, d->path);
            if (!dry && scl_retire_path(d->path, 0, 0) != 0) {
                tool_error("removing %s: %s", d->path, strerror(errno));
                failed = 1;
            }
            removed++;
        }
    }
    if (removed == 0)
        printf("nothing to remove\n");
    inv_free(dirs, n);
    return failed ? TOOL_FAILURE : TOOL_OK;
}

/* --------------------------------------------------------- release */

static int release(int argc, char **argv)
{
    static const struct option opts[] = {
        { "force", no_argument, NULL, 'f' }, { "server", required_argument, NULL, 's' }, { NULL, 0, NULL, 0 },
    };
    const char *server = NULL, *name;
    struct inv_dir *dirs, *found_dir = NULL;
    struct inv_claim *found = NULL;
    int force = 0, c, r = TOOL_OK;
    size_t n;

    while ((c = getopt_long(argc, argv, "+fs:", opts, NULL)) != -1) {
        switch (c) {
        case 'f': force = 1; break;
        case 's': server = optarg; break;
        default: return usage_error("release: unknown option");
        }
    }
    if (optind != argc - 1)
        return usage_error("release takes one claim NAME");
    if (!force)
        return usage_error("release removes a claim behind its holder's back: say --force");
    name = argv[optind];
    if (load_selected(server, &dirs, &n) != 0)
        return TOOL_FAILURE;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < dirs[i].nclaims; j++)
            if (strcmp(dirs[i].claims[j].name, name) == 0) {
                if (found != NULL) {
                    tool_error("'%s' is held in %s and in %s: say which with --server", name, found_dir->path,
                               dirs[i].path);
                    inv_free(dirs, n);
                    return TOOL_FAILURE;
                }
                found = &dirs[i].claims[j];
                found_dir = &dirs[i];
            }
    if (found == NULL) {
        tool_error("no claim named '%s'%s%s", name, server ? " in " : "", server ? server : "");
        inv_free(dirs, n);
        return TOOL_FAILURE;
    }
    if (found->holder >= 0 && found_dir->procs[found->holder].state == SCL_PROC_ALIVE)
        tool_error("WARNING: process %d (%s) is alive and believes it holds '%s'; releasing it anyway",
                   (int)found_dir->procs[found->holder].pid, found_dir->procs[found->holder].command, name);
    {
        char claims[PATH_MAX + 16];
        int fd;
        snprintf(claims, sizeof claims, "%s/" SCL_CLAIMS_DIR, found_dir->path);
        fd = open(claims, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        /* The holder is told first (wake.h): its late release must then
         * check whose the name is.  Only the claim we looked at goes: one
         * taken since stays. */
        if (fd >= 0 && scl_wake_revoke(fd) != 0) {
            tool_error("releasing '%s' in %s: cannot tell its holder through %s/" SCL_WAKE_FILE
                       " (%s): run this as root or as the directory's owner",
                       name, found_dir->path, found_dir->path, strerror(errno));
            r = TOOL_FAILURE;
        } else if (fd < 0 || scl_claim_remove_if_same(fd, found->fname, found->dev, found->ino) != 0) {
            tool_error("releasing '%s' in %s: %s", name, found_dir->path,
                       errno == ESTALE ? "it was released and taken again meanwhile" : strerror(errno));
            r = TOOL_FAILURE;
        } else {
            printf("released '%s' in %s\n", name, found_dir->path);
        }
        if (fd >= 0)
            close(fd);
    }
    inv_free(dirs, n);
    return r;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "base", required_argument, NULL, 'b' }, { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },    { NULL, 0, NULL, 0 },
    };
    const char *command;
    int c;

    tool_base = scl_settings()->base_dir;
    while ((c = getopt_long(argc, argv, "+b:hV", opts, NULL)) != -1) {
        switch (c) {
        case 'b':
            tool_base = optarg;
            tool_base_explicit = 1;
            break;
        case 'h': help(); return TOOL_OK;
        case 'V': printf("swerve-claim %s\n", PACKAGE_VERSION); return TOOL_OK;
        default: return usage_error("unknown option");
        }
    }
    if (optind >= argc)
        return usage_error("no command given");
    command = argv[optind];
    argc -= optind;
    argv += optind;
    optind = 1;
    if (strcmp(command, "list") == 0)
        return list(argc, argv);
    if (strcmp(command, "gc") == 0)
        return gc(argc, argv);
    if (strcmp(command, "release") == 0)
        return release(argc, argv);
    if (strcmp(command, "run") == 0)
        return tool_run(argc, argv);
    tool_error("unknown command '%s' (commands: list, gc, release, run)", command);
    return TOOL_USAGE;
}
