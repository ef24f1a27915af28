/*
 * swerve-claim run: hold a claim while a command runs, like flock(1).
 * The tool itself takes the claim (it is not preloaded) and runs the
 * command as its child; the claim goes when the command ends, or with the
 * tool if it is killed (a dead holder's claim counts as free).
 */
#include "config.h"

#include "lock.h"
#include "serverdir.h"
#include "swerve/claim.h"
#include "tool.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t child_pid;

/* A stop meant for the tool goes to the command: the tool stays to
 * release the claim once it has ended. */
static void forward(int sig)
{
    if (child_pid > 0)
        kill((pid_t)child_pid, sig);
}

/* Joins the namespace: --server's directory, or one of this user's own
 * shared by all their `run`s. */
static int join(const char *server)
{
    char path[PATH_MAX], own[64], *slash;
    const char *base, *name;
    int r;

    if (server != NULL) {
        if (tool_select_dir(server, path, sizeof path) != 0)
            return -1;
        slash = strrchr(path, '/');
        *slash = '\0';
        base = path[0] != '\0' ? path : "/";
        name = slash + 1;
    } else {
        snprintf(own, sizeof own, "swerve-claim.run-%d", (int)getuid());
        base = tool_base;
        name = own;
    }
    scl_lock();
    r = scl_dir_use_named_locked(base, name);
    scl_unlock();
    if (r != 0)
        tool_error("cannot use the claim directory %s/%s: %s", base, name, strerror(errno));
    return r;
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

/* Releases CLAIM and leaves the namespace, as the preloaded library would
 * at exit (the tool is not preloaded); returns STATUS. */
static int leave(struct swerve_claim *claim, int status)
{
    int dirfd;

    swerve_claim_free(claim);
    if ((dirfd = scl_dir_fd()) >= 0)
        scl_dir_leave(dirfd, 1);
    return status;
}

int tool_run(int argc, char **argv)
{
    static const struct option opts[] = {
        { "wait", required_argument, NULL, 'w' },
        { "server", required_argument, NULL, 's' },
        { "conflict-exit-code", required_argument, NULL, 'E' },
        { NULL, 0, NULL, 0 },
    };
    const char *server = NULL;
    double wait = 0;
    int conflict = TOOL_CONFLICT_DEFAULT, c, status;
    struct swerve_claim *claim;
    struct sigaction fwd = { .sa_handler = forward };
    pid_t pid;

    while ((c = getopt_long(argc, argv, "+w:s:E:", opts, NULL)) != -1) {
        switch (c) {
        case 'w':
            if (parse_seconds(optarg, &wait) != 0) {
                tool_error("--wait takes seconds (0 or more), not '%s'", optarg);
                return TOOL_USAGE;
            }
            break;
        case 's': server = optarg; break;
        case 'E': conflict = atoi(optarg); break;
        default: tool_error("run: unknown option (try 'swerve-claim --help')"); return TOOL_USAGE;
        }
    }
    if (optind >= argc) {
        tool_error("run needs a claim NAME and a COMMAND (try 'swerve-claim --help')");
        return TOOL_USAGE;
    }
    claim = swerve_claim_new(argv[optind++]);
    if (claim == NULL) {
        tool_error("bad claim name: %s", strerror(errno));
        return TOOL_USAGE;
    }
    if (optind < argc && strcmp(argv[optind], "--") == 0)
        optind++;
    if (optind >= argc) {
        tool_error("run needs a COMMAND after the claim name");
        return TOOL_USAGE;
    }
    if (join(server) != 0)
        return TOOL_FAILURE;
    if (swerve_claim_acquire(claim, wait) == NULL) {
        if (errno == EWOULDBLOCK || errno == ETIMEDOUT)
            return leave(claim, conflict); /* quiet, as flock(1) is: cron mails what it says */
        tool_error("taking '%s': %s", swerve_claim_name(claim), strerror(errno));
        return leave(claim, TOOL_FAILURE);
    }

    sigemptyset(&fwd.sa_mask);
    fwd.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &fwd, NULL);
    sigaction(SIGHUP, &fwd, NULL);
    signal(SIGINT, SIG_IGN); /* the terminal sends it to the command too */
    signal(SIGQUIT, SIG_IGN);
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGQUIT, SIG_DFL);
        execvp(argv[optind], argv + optind);
        tool_error("%s: %s", argv[optind], strerror(errno));
        _exit(errno == ENOENT ? TOOL_NOT_FOUND : TOOL_CANNOT_EXEC);
    }
    if (pid < 0) {
        tool_error("fork: %s", strerror(errno));
        status = TOOL_FAILURE << 8;
    } else {
        child_pid = pid;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    return leave(claim, status_of(status));
}
