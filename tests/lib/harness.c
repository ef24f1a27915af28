/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *required(const char *name)
{
    const char *v = getenv(name);

    if (v == NULL || *v == '\0') {
        fprintf(stderr, "%s is not set: run through `make check`\n", name);
        abort();
    }
    return v;
}

void harness_program(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", required("SCL_HELPERS"), name);
}

void harness_env(struct harness_env *env, const char *base, int preload, const char *const *extra)
{
    const char *asan = getenv("SCL_ASAN_RUNTIME");
    int n = 0;

    env->vars[n++] = "PATH=/usr/bin:/bin";
    snprintf(env->storage[0], sizeof env->storage[0], "SWERVE_TMPDIR=%s", base);
    env->vars[n++] = env->storage[0];
    /* Helpers leak on purpose when a scenario ends a process early; the
     * library's own leaks are the unit tests' business. */
    env->vars[n++] = "ASAN_OPTIONS=detect_leaks=0";
    if (preload) {
        snprintf(env->storage[1], sizeof env->storage[1], "LD_PRELOAD=%s%s%s", asan != NULL && *asan ? asan : "",
                 asan != NULL && *asan ? ":" : "", required("SCL_PRELOAD"));
        env->vars[n++] = env->storage[1];
    }
    for (int i = 0; extra != NULL && extra[i] != NULL; i++) {
        size_t key = strcspn(extra[i], "=") + 1;
        int at = 0;
        while (at < n && strncmp(env->vars[at], extra[i], key) != 0)
            at++;
        if (at >= 23)
            abort();
        env->vars[at] = (char *)extra[i];
        n += at == n;
    }
    env->vars[n] = NULL;
}

static int read_number(const char *path, long *v)
{
    FILE *f = fopen(path, "r");
    int ok = f != NULL && fscanf(f, "%ld", v) == 1;

    if (f != NULL)
        fclose(f);
    return ok ? 0 : -1;
}

/* A failed Check assertion ends the forked test process with _exit():
 * neither its teardown nor atexit handlers run.  So every server's
 * process group goes into a file the runner reads afterwards. */
static char registry[4096];

void harness_registry_begin(void)
{
    snprintf(registry, sizeof registry, "%s/scl-servers.%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid());
    unlink(registry);
}

void harness_registry_end(void)
{
    FILE *f = fopen(registry, "r");
    long group;

    while (f != NULL && fscanf(f, "%ld", &group) == 1)
        if (group > 1)
            kill(-(pid_t)group, SIGKILL);
    if (f != NULL)
        fclose(f);
    unlink(registry);
}

static void remember_group(pid_t group)
{
    FILE *f = registry[0] != '\0' ? fopen(registry, "a") : NULL;

    if (f != NULL) {
        fprintf(f, "%ld\n", (long)group);
        fclose(f);
    }
}

int server_start(struct server *s, const char *base, const char *dir, const char *const *args)
{
    char program[4096], port_file[4200], pid_file[4200];
    const char *argv[32];
    struct harness_env env;
    long port = 0, master = 0;
    int n = 0;

    memset(s, 0, sizeof *s);
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    snprintf(port_file, sizeof port_file, "%s/port", dir);
    snprintf(pid_file, sizeof pid_file, "%s/pid", dir);
    unlink(port_file);
    unlink(pid_file);
    harness_program(program, sizeof program, "prefork/prefork_server");
    argv[n++] = program;
    argv[n++] = "--port-file";
    argv[n++] = port_file;
    argv[n++] = "--pid-file";
    argv[n++] = pid_file;
    for (int i = 0; args != NULL && args[i] != NULL && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    harness_env(&env, base, 1, NULL);
    s->launched = fork();
    if (s->launched < 0)
        return -1;
    if (s->launched == 0) {
        setpgid(0, 0);
        execve(program, (char *const *)argv, env.vars);
        _exit(127);
    }
    setpgid(s->launched, s->launched); /* whichever of us runs first */
    remember_group(s->launched);
    for (int i = 0; i < 1000; i++) {
        if (read_number(pid_file, &master) == 0 && read_number(port_file, &port) == 0 && port > 0) {
            s->master = (pid_t)master;
            s->port = (int)port;
            if (s->master != s->launched)
                remember_group(s->master); /* a daemon leads a session of its own */
            return 0;
        }
        usleep(10000);
    }
    return -1;
}

int http_get(int port, const char *path, char *body, size_t cap)
{
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    struct timeval tv = { .tv_sec = 10 };
    char req[256], resp[4096];
    size_t len = 0;
    const char *start;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    snprintf(req, sizeof req, "GET %s HTTP/1.0\r\n\r\n", path);
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || write(fd, req, strlen(req)) < 0) {
        close(fd);
        return -1;
    }
    for (;;) {
        ssize_t got = read(fd, resp + len, sizeof resp - 1 - len);
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    close(fd);
    resp[len] = '\0';
    start = strstr(resp, "\r\n\r\n");
    if (start == NULL)
        return -1;
    snprintf(body, cap, "%s", start + 4);
    return 0;
}

int server_stop(struct server *s)
{
    int stopped = 0;

    if (s->master > 0 && kill(s->master, SIGTERM) == 0) {
        for (int i = 0; i < 1000 && !stopped; i++) {
            /* Our own child is reaped here; a daemon's master is not ours. */
            if (s->launched > 0 && waitpid(s->launched, NULL, WNOHANG) == s->launched)
                s->launched = 0;
            stopped = kill(s->master, 0) != 0 && s->launched != s->master;
            if (!stopped)
                usleep(10000);
        }
    }
    if (!stopped && s->master > 0)
        kill(-s->master, SIGKILL);
    if (s->launched > 0) {
        kill(s->launched, SIGKILL);
        waitpid(s->launched, NULL, 0);
    }
    return stopped ? 0 : -1;
}
