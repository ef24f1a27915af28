/* SPDX-License-Identifier: MIT */
/*
 * prefork_server - a small prefork HTTP server that knows nothing of the
 * shim but the dlsym'd API: the kind of legacy daemon swerve-claim is for.
 * Its options reproduce what real servers do to a preloaded library.
 *
 * The master listens on 127.0.0.1, forks the workers, respawns those that
 * die and, on SIGTERM or SIGINT, stops them and reaps them.  Each worker
 * answers:
 *
 *   GET /report   the seed's nightly-report pattern: the worker that gets
 *                 the claim answers "worker PID runs the report" and holds
 *                 it for --report-ms; the others answer "worker PID:
 *                 someone else is on it".
 *   GET /status   "free" or "held": whether nightly-report is available.
 *   GET /pid      the worker's pid.
 *
 * Options:
 *   --port N, --workers N, --report-ms N, --port-file F, --pid-file F
 *   --daemonize         fork twice (exit, then _exit) with setsid between,
 *                       like nginx, gunicorn --daemon and uwsgi --daemonize
 *   --reap MODE         handler: waitpid(-1, WNOHANG) in the SIGCHLD handler
 *                       (nginx); loop: in the main loop (Apache, uWSGI);
 *                       ignore: SIGCHLD set to SIG_IGN, nobody reaps
 *   --user NAME         when root, workers drop to NAME after fork
 *                       (setgid, initgroups, setuid)
 *   --close-fds MODE    workers close every descriptor but their listener
 *                       after fork: range (close_range), loop (close() up
 *                       to 20000, as uWSGI does)
 *   --chroot DIR        workers chroot to DIR after fork (root only)
 *   --exec-helper       /report runs in a helper the worker forks and
 *                       execs (this program, --helper), which takes the
 *                       claim itself
 *   --reexec            on SIGHUP the master stops its workers and execs
 *                       itself in the same pid, keeping its listener
 *                       (uWSGI's reload)
 *
 * Without the shim it still serves: every /report runs, and says so.
 */
#define _GNU_SOURCE 1 /* close_range, initgroups */
#include <swerve/claim-loader.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_WORKERS   64
#define LISTEN_FD_ENV "PREFORK_LISTEN_FD"

enum reap_mode { REAP_LOOP, REAP_HANDLER, REAP_IGNORE };
enum close_mode { CLOSE_NONE, CLOSE_RANGE, CLOSE_LOOP };

struct options {
    int port, workers, report_ms;
    const char *port_file, *pid_file, *user, *chroot_dir;
    int daemonize, exec_helper, reexec;
    enum reap_mode reap;
    enum close_mode close_fds;
};

static struct swerve_claim_api api;
static int have_claims;
static volatile sig_atomic_t stopping, reloading;
static char **saved_argv;

static void on_stop(int sig)
{
    (void)sig;
    stopping = 1;
}

static void on_reload(int sig)
{
    (void)sig;
    reloading = 1;
}

static pid_t workers_pid[MAX_WORKERS];
static int workers_n;

/* nginx's way: reap in the handler; the main loop respawns. */
static void reap_in_handler(int sig)
{
    int saved = errno, status;
    pid_t pid;

    (void)sig;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
        for (int i = 0; i < workers_n; i++)
            if (workers_pid[i] == pid)
                workers_pid[i] = 0;
    errno = saved;
}

static void usage(FILE *to)
{
    fprintf(to, "usage: prefork_server [--port N] [--workers N] [--report-ms N] [--port-file F]\n"
                "         [--pid-file F] [--daemonize] [--reap handler|loop|ignore] [--user NAME]\n"
                "         [--close-fds range|loop] [--chroot DIR] [--exec-helper] [--reexec]\n"
                "       prefork_server --helper REPORT-MS\n");
}

static void parse(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        { "port", required_argument, NULL, 'p' },
        { "workers", required_argument, NULL, 'w' },
        { "report-ms", required_argument, NULL, 'r' },
        { "port-file", required_argument, NULL, 'P' },
        { "pid-file", required_argument, NULL, 'i' },
        { "daemonize", no_argument, NULL, 'd' },
        { "reap", required_argument, NULL, 'R' },
        { "user", required_argument, NULL, 'u' },
        { "close-fds", required_argument, NULL, 'c' },
        { "chroot", required_argument, NULL, 'C' },
        { "exec-helper", no_argument, NULL, 'x' },
        { "reexec", no_argument, NULL, 'X' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    *o = (struct options){ .workers = 4, .report_ms = 500 };
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'p': o->port = atoi(optarg); break;
        case 'w': o->workers = atoi(optarg); break;
        case 'r': o->report_ms = atoi(optarg); break;
        case 'P': o->port_file = optarg; break;
        case 'i': o->pid_file = optarg; break;
        case 'd': o->daemonize = 1; break;
        case 'u': o->user = optarg; break;
        case 'C': o->chroot_dir = optarg; break;
        case 'x': o->exec_helper = 1; break;
        case 'X': o->reexec = 1; break;
        case 'R':
            if (strcmp(optarg, "loop") == 0)
                o->reap = REAP_LOOP;
            else if (strcmp(optarg, "handler") == 0)
                o->reap = REAP_HANDLER;
            else if (strcmp(optarg, "ignore") == 0)
                o->reap = REAP_IGNORE;
            else {
                usage(stderr);
                exit(2);
            }
            break;
        case 'c':
            if (strcmp(optarg, "range") == 0)
                o->close_fds = CLOSE_RANGE;
            else if (strcmp(optarg, "loop") == 0)
                o->close_fds = CLOSE_LOOP;
            else {
                usage(stderr);
                exit(2);
            }
            break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); exit(2);
        }
    }
    if (optind != argc || o->workers < 1 || o->workers > MAX_WORKERS || o->port < 0 || o->port > 65535) {
        usage(stderr);
        exit(2);
    }
}

static void write_number(const char *path, long n)
{
    FILE *f;

    if (path == NULL)
        return;
    f = fopen(path, "w");
    if (f == NULL || fprintf(f, "%ld\n", n) < 0 || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

static void respond(int conn, const char *body)
{
    char head[128];
    int n = snprintf(head, sizeof head, "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n\r\n",
                     strlen(body));

    if (write(conn, head, (size_t)n) == n)
        (void)!write(conn, body, strlen(body));
}

/* Sleeps MS, in slices, until told to stop: a stop signal that came just
 * before the sleep must not leave it to run to its end. */
static void sleep_ms(int ms)
{
    for (int slept = 0; slept < ms && !stopping; slept += 10) {
        struct timespec ts = { .tv_nsec = 10 * 1000000L };
        nanosleep(&ts, NULL);
    }
}

/* The report itself, in whatever process runs it; WHO names that process
 * in the answer. */
static void report(int conn, const char *who, int report_ms)
{
    char body[160];

    if (!have_claims) {
        snprintf(body, sizeof body, "%s %d runs the report (no claims: shim not loaded)\n", who, (int)getpid());
        respond(conn, body);
        return;
    }
    SWERVE_CLAIM_AUTO struct swerve_claim *claim = api.new_claim("nightly-report");
    if (claim != NULL && api.acquire(claim, 0.0)) {
        snprintf(body, sizeof body, "%s %d runs the report\n", who, (int)getpid());
        respond(conn, body);
        shutdown(conn, SHUT_WR);
        sleep_ms(report_ms);
    } else {
        snprintf(body, sizeof body, "%s %d: someone else is on it\n", who, (int)getpid());
        respond(conn, body);
    }
} /* the claim is released here */

/* --exec-helper: the report runs in a program the worker execs, with the
 * connection as its standard output. */
static void report_in_helper(int conn, const struct options *o)
{
    char ms[16];
    pid_t pid;
    int status;

    snprintf(ms, sizeof ms, "%d", o->report_ms);
    pid = fork();
    if (pid == 0) {
        dup2(conn, STDOUT_FILENO);
        execl("/proc/self/exe", "prefork_server", "--helper", ms, (char *)NULL);
        _exit(127);
    }
    if (pid > 0)
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
}

static void serve(int conn, const struct options *o)
{
    char req[1024], body[64];
    ssize_t n = read(conn, req, sizeof req - 1);

    if (n <= 0)
        return;
    req[n] = '\0';
    if (strncmp(req, "GET /report", 11) == 0) {
        if (o->exec_helper)
            report_in_helper(conn, o);
        else
            report(conn, "worker", o->report_ms);
    } else if (strncmp(req, "GET /status", 11) == 0) {
        SWERVE_CLAIM_AUTO struct swerve_claim *claim = have_claims ? api.new_claim("nightly-report") : NULL;
        respond(conn, claim != NULL && api.available(claim) == 0 ? "held\n" : "free\n");
    } else if (strncmp(req, "GET /pid", 8) == 0) {
        snprintf(body, sizeof body, "%d\n", (int)getpid());
        respond(conn, body);
    } else {
        respond(conn, "try /report, /status or /pid\n");
    }
}

static void die(const char *what)
{
    perror(what);
    _exit(1);
}

/* What real servers do to a freshly forked worker. */
static void become_worker(int listener, const struct options *o)
{
    if (o->close_fds == CLOSE_RANGE) {
        if ((listener > 3 && close_range(3, (unsigned)listener - 1, 0) != 0) ||
            close_range((unsigned)listener + 1, ~0U, 0) != 0)
            die("close_range");
    } else if (o->close_fds == CLOSE_LOOP) {
        for (int fd = 3; fd < 20000; fd++)
            if (fd != listener)
                close(fd);
    }
    if (o->chroot_dir != NULL && (chroot(o->chroot_dir) != 0 || chdir("/") != 0))
        die("chroot");
    if (o->user != NULL && geteuid() == 0) {
        struct passwd *pw = getpwnam(o->user);
        if (pw == NULL)
            die(o->user);
        if (setgid(pw->pw_gid) != 0 || initgroups(o->user, pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0)
            die("dropping privileges");
    }
}

static void worker(int listener, const struct options *o)
{
    struct sigaction sa = { .sa_handler = on_stop };

    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL); /* no SA_RESTART: accept() returns */
    sigaction(SIGINT, &sa, NULL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    become_worker(listener, o);
    while (!stopping) {
        int conn = accept(listener, NULL, NULL);
        if (conn < 0)
            continue;
        serve(conn, o);
        close(conn);
    }
    exit(0);
}

static pid_t spawn(int listener, const struct options *o)
{
    pid_t pid = fork();

    if (pid == 0)
        worker(listener, o);
    if (pid < 0)
        perror("fork");
    return pid;
}

/* Fork twice with setsid between; the first parent leaves through exit(),
 * the second through _exit(), as gunicorn and uwsgi do. */
static void daemonize(void)
{
    pid_t pid = fork();

    if (pid < 0)
        die("fork");
    if (pid > 0)
        exit(0);
    if (setsid() < 0)
        die("setsid");
    pid = fork();
    if (pid < 0)
        die("fork");
    if (pid > 0)
        _exit(0);
}

static int open_listener(const struct options *o, struct sockaddr_in *addr)
{
    socklen_t len = sizeof *addr;
    const char *inherited = getenv(LISTEN_FD_ENV);
    int listener, one = 1;

    if (inherited != NULL) { /* after --reexec */
        listener = atoi(inherited);
        if (getsockname(listener, (struct sockaddr *)addr, &len) != 0)
            die("inherited listener");
        return listener;
    }
    *addr = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons((uint16_t)o->port) };
    addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    listener = socket(AF_INET, SOCK_STREAM, 0);
    if (listener < 0 || setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(listener, (struct sockaddr *)addr, sizeof *addr) != 0 || listen(listener, 64) != 0 ||
        getsockname(listener, (struct sockaddr *)addr, &len) != 0)
        die("prefork_server: listen on 127.0.0.1");
    return listener;
}

/* Reaps what died (--reap loop) and forks replacements. */
static void tend_workers(int listener, const struct options *o)
{
    int status;
    pid_t dead;

    if (o->reap == REAP_LOOP)
        while ((dead = waitpid(-1, &status, WNOHANG)) > 0)
            for (int i = 0; i < workers_n; i++)
                if (workers_pid[i] == dead)
                    workers_pid[i] = 0;
    if (o->reap == REAP_IGNORE)
        for (int i = 0; i < workers_n; i++)
            if (workers_pid[i] > 0 && kill(workers_pid[i], 0) != 0)
                workers_pid[i] = 0; /* gone, reaped by the kernel */
    for (int i = 0; i < workers_n && !stopping && !reloading; i++)
        if (workers_pid[i] == 0)
            workers_pid[i] = spawn(listener, o);
}

/* SIGTERM, then after 5 s SIGKILL to whoever is left, as real servers do;
 * all of them reaped. */
static void stop_workers(void)
{
    for (int i = 0; i < workers_n; i++)
        if (workers_pid[i] > 0)
            kill(workers_pid[i], SIGTERM);
    for (int i = 0; i < 1000; i++) { /* at most 10 s */
        int left = 0;
        pid_t dead;
        while ((dead = waitpid(-1, NULL, WNOHANG)) > 0)
            for (int j = 0; j < workers_n; j++)
                if (workers_pid[j] == dead)
                    workers_pid[j] = 0;
        for (int j = 0; j < workers_n; j++)
            left += workers_pid[j] > 0 && kill(workers_pid[j], 0) == 0;
        if (left == 0)
            return;
        if (i == 500)
            for (int j = 0; j < workers_n; j++)
                if (workers_pid[j] > 0)
                    kill(workers_pid[j], SIGKILL);
        struct timespec tick = { .tv_nsec = 10 * 1000000L };
        nanosleep(&tick, NULL);
    }
}

int main(int argc, char **argv)
{
    struct options o;
    struct sockaddr_in addr;
    struct sigaction stop = { .sa_handler = on_stop }, hup = { .sa_handler = on_reload };
    int listener;

    have_claims = swerve_claim_load(&api);
    if (argc == 3 && strcmp(argv[1], "--helper") == 0) {
        report(STDOUT_FILENO, "helper", atoi(argv[2]));
        return 0;
    }
    saved_argv = argv;
    parse(argc, argv, &o);
    if (o.daemonize && getenv(LISTEN_FD_ENV) == NULL)
        daemonize();
    listener = open_listener(&o, &addr);
    sigemptyset(&stop.sa_mask);
    sigaction(SIGTERM, &stop, NULL);
    sigaction(SIGINT, &stop, NULL);
    sigemptyset(&hup.sa_mask);
    if (o.reexec)
        sigaction(SIGHUP, &hup, NULL);
    if (o.reap == REAP_HANDLER) {
        struct sigaction chld = { .sa_handler = reap_in_handler, .sa_flags = SA_RESTART };
        sigemptyset(&chld.sa_mask);
        sigaction(SIGCHLD, &chld, NULL);
    } else if (o.reap == REAP_IGNORE) {
        signal(SIGCHLD, SIG_IGN);
    }

    workers_n = o.workers;
    for (int i = 0; i < workers_n; i++)
        workers_pid[i] = spawn(listener, &o);
    write_number(o.port_file, ntohs(addr.sin_port));
    write_number(o.pid_file, getpid());

    while (!stopping && !reloading) {
        tend_workers(listener, &o);
        sleep_ms(20);
    }
    stop_workers();
    if (reloading && o.reexec) {
        char fd[16];
        snprintf(fd, sizeof fd, "%d", listener);
        setenv(LISTEN_FD_ENV, fd, 1);
        execv("/proc/self/exe", saved_argv);
        die("re-exec");
    }
    return 0;
}
