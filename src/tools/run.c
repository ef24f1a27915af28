/* SPDX-License-Identifier: MIT */
/*
 * swerve-claim run: hold a claim while a command runs, like flock(1).
 *
 * The command's own process holds the claim: the tool forks, the child
 * takes the claim (waiting if asked) and execs the command in the same
 * pid, so the claim is held for exactly as long as the command runs, even
 * if the tool itself is SIGKILLed (flock(1) keeps its lock the same way,
 * through the descriptor the command inherits).  The tool reaps the
 * command and clears its claim at once; without the tool, the next taker
 * finds the holder dead and clears it.
 *
 * Without --server the claims live in the namespace of the server whose
 * process started run (SWERVE_CLAIM_DIR), or of the user's one live
 * server, or else in a namespace of the user's own that no other user can
 * squat (the store's run_namespace(), store_admin.h).
 *
 * With SWERVE_CLAIM_STORE the claim is the fleet's: the command inherits
 * the database session that holds it (its socket stays open across exec),
 * so that the claim ends when the command and whatever kept the socket
 * end, as flock(1)'s lock does with its descriptor.
 */
#include "config.h"

#include "sigsafe.h"
#include "swerve/claim.h"
#include "store.h"
#include "store_admin.h"
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pwd.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t child_pid;

/* The signals the tool handles for itself, and what it was started with,
 * which the command gets back: a command run through the tool sees the
 * dispositions (a nohup's ignored SIGHUP, an ignored SIGCHLD) it would
 * see without it.  The signal mask is never changed, so it passes on as
 * it came. */
static const int own_signals[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD };
static struct sigaction inherited[sizeof own_signals / sizeof own_signals[0]];

/* A stop meant for the tool goes to the command: the tool stays to clear
 * the claim once it has ended. */
static void forward(int sig)
{
    if (child_pid > 0)
        kill((pid_t)child_pid, sig);
}

/* Says why BASE/NAME cannot be used: for the user's own namespace
 * (not OF_SERVER), another user's taking its name, most likely. */
static void explain_namespace(const char *base, const char *name, int of_server, int err)
{
    struct stat st;
    char path[PATH_MAX + NAME_MAX + 2];

    snprintf(path, sizeof path, "%s/%s", base, name);
    if (!of_server && lstat(path, &st) == 0 && st.st_uid != geteuid())
        tool_error("%s belongs to uid %d, not to you: another user has taken the name of your run "
                   "namespace; give this user a home directory of its own, or name a directory only "
                   "you can write with --base",
                   path, (int)st.st_uid);
    else
        tool_error("cannot use the claim directory %s: %s", path, strerror(err));
}

static double now_seconds(void)
{
    return (double)scl_monotonic_ns() / 1e9;
}

/* The claim directory joined (for --verbose), or "". */
static char joined[PATH_MAX + NAME_MAX + 2];

/*
 * Root, on the directory PATH of a server that runs as another user
 * (uWSGI --uid www-data: its directory is that user's), becomes that user,
 * as su(1) would, before it joins: the claim is then held by a process of
 * the server's own user, and root never writes in a directory another user
 * controls (doc/security.md).  0, or -1 (said).
 */
static int become_owner_of(const char *path)
{
    const struct passwd *pw;
    struct stat st;
    gid_t gid;

    if (geteuid() != 0)
        return 0;
    if (lstat(path, &st) != 0) {
        tool_error("cannot examine %s: %s", path, strerror(errno));
        return -1;
    }
    if (st.st_uid == 0)
        return 0;
    pw = getpwuid(st.st_uid);
    gid = pw != NULL ? pw->pw_gid : st.st_gid;
    if ((pw != NULL ? initgroups(pw->pw_name, gid) : setgroups(0, NULL)) != 0 || setgid(gid) != 0 ||
        setuid(st.st_uid) != 0) {
        tool_error("cannot become uid %d, the owner of %s: %s", (int)st.st_uid, path, strerror(errno));
        return -1;
    }
    tool_error("note: running as %s (uid %d), the user of the server whose directory is %s",
               pw != NULL ? pw->pw_name : "a user with no name", (int)st.st_uid, path);
    return 0;
}

/* Joins the claim directory at PATH (a server's when OF_SERVER, else the
 * user's own namespace): 0, or -1 (said). */
static int join_dir(char *path, int of_server)
{
    char *slash = strrchr(path, '/');
    const char *base = path;
    int r;

    *slash = '\0';
    if (path[0] == '\0')
        base = "/";
    r = scl_store_admin()->directories->join(base, slash + 1);
    if (r != 0)
        explain_namespace(base, slash + 1, of_server, errno);
    snprintf(joined, sizeof joined, "%s/%s", path, slash + 1);
    return r;
}

/* Joins the namespace of CLAIM: --server's directory (SERVER not NULL);
 * without it, unless OWN, that of the server whose process started run
 * (its environment names it), or else of the user's one live server in
 * the base, when there is one; else the user's own.  0, TOOL_USAGE (several
 * servers: said) or TOOL_FAILURE (said). */
static int join(const char *server, const char *claim, int own, int verbose)
{
    const struct scl_admin_directories *dirs_of = scl_store_admin()->directories;
    char path[PATH_MAX + NAME_MAX + 2], name[NAME_MAX + 1];
    long master;
    int found = 0;

    if (server != NULL)
        return dirs_of->select(server, path, sizeof path) != 0 || become_owner_of(path) != 0 || join_dir(path, 1) != 0
                   ? TOOL_FAILURE
                   : TOOL_OK;
    if (!own && (found = dirs_of->join_environment(path, sizeof path)) != 0) {
        if (found < 0) {
            tool_error("cannot use the claim directory %s, which SWERVE_CLAIM_DIR names: %s", path, strerror(errno));
            return TOOL_FAILURE;
        }
        snprintf(joined, sizeof joined, "%s", path);
        if (verbose)
            tool_error("joined the server that started it, whose claim directory its environment names (%s; "
                       "--own-namespace keeps to your own)",
                       joined);
        return TOOL_OK;
    }
    if (!own && (found = dirs_of->only_server(claim, path, sizeof path, &master)) < 0)
        return TOOL_USAGE;
    if (found) {
        if (join_dir(path, 1) != 0)
            return TOOL_FAILURE;
        if (verbose)
            tool_error("joined the server of process %ld, the one live server in %s (%s; --own-namespace keeps to "
                       "your own)",
                       master, scl_admin_base(), joined);
        return TOOL_OK;
    }
    (void)dirs_of->run_namespace(path, PATH_MAX, name, sizeof name, 1);
    snprintf(path + strlen(path), sizeof path - strlen(path), "/%s", name);
    return join_dir(path, 0) != 0 ? TOOL_FAILURE : TOOL_OK;
}

/* What the child tells the tool when it does not get as far as running
 * the command (nothing, when the exec succeeds: the pipe just closes). */
struct outcome {
    int stage; /* STAGE_CLAIM: no claim; STAGE_TOKEN: no token (a database
                * that cannot issue one in time); STAGE_EXEC: the exec failed */
    int err;
};
enum { STAGE_CLAIM, STAGE_TOKEN, STAGE_EXEC };

struct holder_seen {
    const char *name;
    char *out;
    size_t cap;
};

static void remember_holder(const struct scl_listed *row, void *arg)
{
    struct holder_seen *h = arg;

    char session[200], says[300];

    if (row->held && strcmp(row->name, h->name) == 0) {
        tool_listed_session(row, session, sizeof session);
        tool_listed_says(row, says, sizeof says);
        snprintf(h->out, h->cap, ", held by %s (%s)", session, says);
    }
}

/* ", held by process PID (COMMAND)" when somebody holds NAME now, else "". */
static void describe_holder(const char *name, char *out, size_t cap)
{
    out[0] = '\0';
    if (scl_store_admin()->can & SCL_ADMIN_SESSIONS) {
        struct holder_seen h = { name, out, cap };
        (void)scl_store_admin()->list(remember_holder, &h);
        return;
    }
    scl_store_admin()->directories->holder(joined, name, out, cap);
}

/* Waits for the child's word on REPORT into *O: how much came.  With
 * VERBOSE on a terminal, a line says how long it has waited. */
static ssize_t await_outcome(int report, struct outcome *o, const char *name, int verbose)
{
    int progress = verbose && isatty(STDERR_FILENO);
    double start = now_seconds();
    ssize_t got;

    for (;;) {
        struct pollfd pfd = { .fd = report, .events = POLLIN };
        int ready = poll(&pfd, 1, progress ? 1000 : -1);
        if (ready < 0 && errno != EINTR)
            break;
        if (ready > 0)
            break;
        if (ready == 0)
            tool_progress("waiting for '%s': %.0f s", scl_admin_shown_name(name), now_seconds() - start);
    }
    if (progress)
        fputs("\r\033[K", stderr);
    do
        got = read(report, o, sizeof *o);
    while (got < 0 && errno == EINTR);
    return got;
}

static int parse_seconds(const char *s, double *out)
{
    char *end;

    errno = 0;
    *out = strtod(s, &end);
    return *end == '\0' && errno == 0 && !isnan(*out) && *out >= 0 ? 0 : -1;
}

static int status_of(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* In the child: takes CLAIM and becomes the command; tells REPORT why
 * not, and exits. */
/* The status of a COMMAND that could not be exec'd (ERR), as a shell's. */
static int exec_failure_status(int err)
{
    return err == ENOENT ? TOOL_NOT_FOUND : TOOL_CANNOT_EXEC;
}

__attribute__((noreturn)) static void hold_and_exec(struct swerve_claim *claim, double wait, char **command, int report)
{
    struct outcome o = { .stage = STAGE_CLAIM };

    for (size_t i = 0; i < sizeof own_signals / sizeof own_signals[0]; i++)
        sigaction(own_signals[i], &inherited[i], NULL);
    if (swerve_claim_acquire(claim, wait) != NULL) {
        uint64_t issued = swerve_claim_token(claim);
        char token[24];
        snprintf(token, sizeof token, "%llu", (unsigned long long)issued);
        o.stage = issued == 0 ? STAGE_TOKEN : STAGE_EXEC;
        if (issued != 0 && setenv("SWERVE_CLAIM_TOKEN", token, 1) == 0 && scl_store_admin()->keep_across_exec() == 0)
            execvp(command[0], command);
    }
    o.err = errno;
    (void)!write(report, &o, sizeof o);
    /* The status the history records for its hold: the shell's, for a
     * command that could not be run. */
    _exit(o.stage == STAGE_EXEC ? exec_failure_status(o.err) : TOOL_FAILURE);
}

/* Clears what the command held (it ended as ENDED says, as wait(2) put
 * it, -1 unknown) and leaves the namespace, through the store's own
 * operations for a reaped child and a process that ends (as one that
 * forked: the last to leave removes the directory); returns STATUS. */
static int leave(struct swerve_claim *claim, pid_t command, int ended, int status)
{
    swerve_claim_free(claim);
    if (scl_store_admin()->can & SCL_ADMIN_DIRECTORIES) {
        if (command > 0)
            scl_store()->child_reaped(command, ended);
        scl_store()->process_ends(getpid());
    }
    return status;
}

/* What run's options say, and the claim's NAME (NULL: none given). */
struct run_options {
    const char *server, *name;
    double wait;
    int conflict, verbose, own;
};

enum { OPT_OWN_NAMESPACE = 256 }; /* a long option only */

/* Reads run's options, before and after its NAME up to its COMMAND (or
 * "--"), into *O, optind then at the COMMAND: 0, or the usage status
 * (said). */
static int parse_options(int argc, char **argv, struct run_options *o)
{
    static const struct option opts[] = {
        { "wait", required_argument, NULL, 'w' },
        { "server", required_argument, NULL, 's' },
        { "conflict-exit-code", required_argument, NULL, 'E' },
        { "verbose", no_argument, NULL, 'v' },
        { "own-namespace", no_argument, NULL, OPT_OWN_NAMESPACE },
        TOOL_BASE_OPTION,
        { NULL, 0, NULL, 0 },
    };
    int c, ended;

    *o = (struct run_options){ .conflict = TOOL_CONFLICT_DEFAULT };
    /* Twice at most: the options before NAME, then those after it; each
     * round ends at an operand or after "--", which ends them all. */
    for (int round = 0; round < 2; round++) {
        while ((c = tool_getopt(argc, argv, "+w:s:E:v", opts)) != -1) {
            switch (c) {
            case 'w':
                if (parse_seconds(optarg, &o->wait) != 0)
                    return tool_usage_error("run: --wait takes seconds (0 or more), not '%s'", optarg);
                break;
            case 's': o->server = optarg; break;
            case 'v': o->verbose = 1; break;
            case OPT_OWN_NAMESPACE: o->own = 1; break;
            case 'E':
                if (tool_parse_exit_code(optarg, &o->conflict) != 0)
                    return TOOL_USAGE;
                break;
            default: return TOOL_USAGE;
            }
        }
        if (o->name != NULL || optind >= argc)
            break;
        ended = optind > 1 && strcmp(argv[optind - 1], "--") == 0;
        o->name = argv[optind++];
        if (ended)
            break; /* "run -- NAME ...": nothing after "--" is an option */
    }
    return 0;
}

/* The signals run takes for itself while its command runs (the command
 * gets what run inherited: hold_and_exec() gives it back). */
static void take_signals(void)
{
    struct sigaction fwd = { .sa_handler = forward };

    for (size_t i = 0; i < sizeof own_signals / sizeof own_signals[0]; i++)
        sigaction(own_signals[i], NULL, &inherited[i]);
    /* An ignored SIGCHLD, inherited from a parent that never reaps, has
     * the kernel reap the command: waitpid would fail with ECHILD and the
     * command's status be lost (flock(1) resets it too). */
    signal(SIGCHLD, SIG_DFL);
    sigemptyset(&fwd.sa_mask);
    fwd.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &fwd, NULL);
    sigaction(SIGHUP, &fwd, NULL);
    signal(SIGINT, SIG_IGN); /* the terminal sends it to the command too */
    signal(SIGQUIT, SIG_IGN);
}

/* The claim named after the options, in *CLAIM, its namespace joined
 * (optind then at the command): 0, or run's status (said). */
static int open_claim(int argc, char **argv, const struct run_options *opt, struct swerve_claim **claim)
{
    int r;

    if (opt->name == NULL)
        return tool_usage_error("run needs a claim NAME and a COMMAND");
    if (tool_check_name(opt->name) != 0 || tool_check_store_options(opt->server, NULL) != 0)
        return TOOL_USAGE;
    if (opt->own && opt->server != NULL)
        return tool_usage_error("run: --own-namespace and --server name two namespaces: give one");
    if (opt->own && !(scl_store_admin()->can & SCL_ADMIN_DIRECTORIES))
        return tool_usage_error("run: --own-namespace is for claims in directories; the %s store's are the fleet's",
                                scl_store_admin()->name);
    *claim = swerve_claim_new(opt->name);
    if (*claim == NULL)
        return tool_usage_error("run: bad claim name: %s", strerror(errno));
    if (optind < argc && strcmp(argv[optind], "--") == 0)
        optind++;
    if (optind >= argc) {
        swerve_claim_free(*claim);
        return tool_usage_error("run needs a COMMAND after the claim name");
    }
    if ((scl_store_admin()->can & SCL_ADMIN_DIRECTORIES) &&
        (r = join(opt->server, opt->name, opt->own, opt->verbose)) != 0) {
        swerve_claim_free(*claim);
        return r;
    }
    return 0;
}

/* --verbose: what run is about to try, and who holds NAME now. */
static void say_trying(const char *name, double wait)
{
    char holder[700];

    describe_holder(name, holder, sizeof holder);
    if (wait > 0)
        tool_error("waiting up to %g s for '%s'%s", wait, scl_admin_shown_name(name), holder);
    else
        tool_error("trying '%s' once%s", scl_admin_shown_name(name), holder);
}

/* run's status once its child PID (reaped, with STATUS, unless REAPED is
 * -1) has run COMMAND, or told in O (GOT bytes of it) why it did not. */
static int outcome_status(const struct outcome *o, ssize_t got, pid_t reaped, int status, int conflict,
                          const char *name, const char *command)
{
    if (got != (ssize_t)sizeof *o) /* the pipe closed at exec: the command ran */
        return reaped < 0 ? TOOL_FAILURE : status_of(status);
    if (o->stage == STAGE_CLAIM && (o->err == EWOULDBLOCK || o->err == ETIMEDOUT))
        return conflict; /* quiet, as flock(1) is: cron mails what it says */
    if (o->stage != STAGE_EXEC) {
        tool_error("%s '%s': %s", o->stage == STAGE_CLAIM ? "taking" : "getting the fencing token of",
                   scl_admin_shown_name(name), strerror(o->err));
        return TOOL_FAILURE;
    }
    tool_error("%s: %s", command, strerror(o->err));
    return exec_failure_status(o->err);
}

int tool_run(int argc, char **argv)
{
    struct run_options opt;
    int status = 0, report[2], r;
    double started;
    struct swerve_claim *claim = NULL;
    struct outcome o;
    ssize_t got;
    pid_t pid, reaped;

    if ((r = parse_options(argc, argv, &opt)) != 0 || (r = open_claim(argc, argv, &opt, &claim)) != 0)
        return r;
    if (pipe2(report, O_CLOEXEC) != 0) {
        tool_error("pipe: %s", strerror(errno));
        return leave(claim, 0, -1, TOOL_FAILURE);
    }
    take_signals();
    if (opt.verbose)
        say_trying(swerve_claim_name(claim), opt.wait);
    started = now_seconds();
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        close(report[0]);
        hold_and_exec(claim, opt.wait, argv + optind, report[1]);
    }
    close(report[1]);
    if (pid < 0) {
        tool_error("fork: %s", strerror(errno));
        close(report[0]);
        return leave(claim, 0, -1, TOOL_FAILURE);
    }
    child_pid = pid;
    got = await_outcome(report[0], &o, swerve_claim_name(claim), opt.verbose);
    close(report[0]);
    if (opt.verbose && got != (ssize_t)sizeof o)
        tool_error("took '%s' after %.1f s", scl_admin_shown_name(swerve_claim_name(claim)), now_seconds() - started);
    else if (opt.verbose && o.stage == STAGE_CLAIM)
        tool_error("gave up on '%s' after %.1f s: %s", scl_admin_shown_name(swerve_claim_name(claim)),
                   now_seconds() - started, strerror(o.err));
    do
        reaped = waitpid(pid, &status, 0);
    while (reaped < 0 && errno == EINTR);
    if (reaped < 0) /* its status is lost: never make one up */
        tool_error("waiting for process %d: %s", (int)pid, strerror(errno));
    return leave(claim, pid, reaped < 0 ? -1 : status,
                 outcome_status(&o, got, reaped, status, opt.conflict, swerve_claim_name(claim), argv[optind]));
}
