/*
 * prefork_server - a small prefork HTTP server that knows nothing of the
 * shim but the dlsym'd API: the kind of legacy daemon swerve-claim is for.
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
 * Without the shim it still serves: every /report runs, and says so.
 */
#include <swerve/claim-loader.h>

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_WORKERS 64

struct options {
    int port;
    int workers;
    int report_ms;
    const char *port_file;
    const char *pid_file;
};

static struct swerve_claim_api api;
static int have_claims;
static volatile sig_atomic_t stopping;

static void on_stop(int sig)
{
    (void)sig;
    stopping = 1;
}

static void usage(FILE *to)
{
    fprintf(to, "usage: prefork_server [--port N] [--workers N] [--report-ms N]\n"
                "                      [--port-file PATH] [--pid-file PATH]\n");
}

static void parse(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        { "port", required_argument, NULL, 'p' },     { "workers", required_argument, NULL, 'w' },
        { "report-ms", required_argument, NULL, 'r' }, { "port-file", required_argument, NULL, 'P' },
        { "pid-file", required_argument, NULL, 'i' },  { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    *o = (struct options){ .port = 0, .workers = 4, .report_ms = 500 };
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'p': o->port = atoi(optarg); break;
        case 'w': o->workers = atoi(optarg); break;
        case 'r': o->report_ms = atoi(optarg); break;
        case 'P': o->port_file = optarg; break;
        case 'i': o->pid_file = optarg; break;
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
    int n = snprintf(head, sizeof head,
                     "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n\r\n", strlen(body));

    if (write(conn, head, (size_t)n) == n)
        (void)!write(conn, body, strlen(body));
}

static void sleep_ms(int ms)
{
    struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !stopping)
        ;
}

static void run_report(int conn, const struct options *o)
{
    char body[128];

    if (!have_claims) {
        snprintf(body, sizeof body, "worker %d runs the report (no claims: shim not loaded)\n", (int)getpid());
        respond(conn, body);
        return;
    }
    SWERVE_CLAIM_AUTO struct swerve_claim *claim = api.new_claim("nightly-report");
    if (claim != NULL && api.acquire(claim, 0.0)) {
        snprintf(body, sizeof body, "worker %d runs the report\n", (int)getpid());
        respond(conn, body);
        close(conn);
        sleep_ms(o->report_ms); /* the report itself */
    } else {
        snprintf(body, sizeof body, "worker %d: someone else is on it\n", (int)getpid());
        respond(conn, body);
    }
} /* the claim is released here */

static void serve(int conn, const struct options *o)
{
    char req[1024], body[64];
    ssize_t n = read(conn, req, sizeof req - 1);

    if (n <= 0)
        return;
    req[n] = '\0';
    if (strncmp(req, "GET /report", 11) == 0) {
        run_report(conn, o);
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

static void worker(int listener, const struct options *o)
{
    struct sigaction sa = { .sa_handler = on_stop };

    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL); /* no SA_RESTART: accept() returns */
    sigaction(SIGINT, &sa, NULL);
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

int main(int argc, char **argv)
{
    struct options o;
    struct sockaddr_in addr = { .sin_family = AF_INET };
    socklen_t len = sizeof addr;
    pid_t workers[MAX_WORKERS];
    struct sigaction sa = { .sa_handler = on_stop };
    int listener, one = 1;

    parse(argc, argv, &o);
    have_claims = swerve_claim_load(&api);
    addr.sin_port = htons((uint16_t)o.port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener < 0 || setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(listener, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(listener, 64) != 0 ||
        getsockname(listener, (struct sockaddr *)&addr, &len) != 0) {
        perror("prefork_server: listen on 127.0.0.1");
        return 1;
    }
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    for (int i = 0; i < o.workers; i++)
        workers[i] = spawn(listener, &o);
    write_number(o.port_file, ntohs(addr.sin_port));
    write_number(o.pid_file, getpid());

    /* Reap in the main loop (as Apache and uWSGI do) and respawn. */
    while (!stopping) {
        int status;
        pid_t dead = waitpid(-1, &status, WNOHANG);
        if (dead <= 0) {
            sleep_ms(50);
            continue;
        }
        for (int i = 0; i < o.workers; i++)
            if (workers[i] == dead)
                workers[i] = spawn(listener, &o);
    }
    for (int i = 0; i < o.workers; i++)
        if (workers[i] > 0)
            kill(workers[i], SIGTERM);
    while (wait(NULL) > 0 || errno == EINTR)
        ;
    return 0;
}
