/* SPDX-License-Identifier: MIT */
/*
 * A fork/exec/wait-heavy program that prints everything a host could
 * notice: exit statuses, wait results, errno, signal dispositions, its own
 * descriptors, and its children's output.  tests/integration runs it with
 * and without the shim and compares the two outputs byte for byte.
 * Nothing it prints depends on pids or timing.
 */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void describe_status(const char *how, int status)
{
    if (WIFEXITED(status))
        printf("%s: exited %d\n", how, WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        printf("%s: killed by signal %d\n", how, WTERMSIG(status));
    else
        printf("%s: status %#x\n", how, status);
}

static void dispositions(const char *when)
{
    static const int sigs[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGPIPE, SIGALRM };

    printf("dispositions %s:", when);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        sigaction(sigs[i], NULL, &sa);
        printf(" %d=%s", sigs[i],
               sa.sa_handler == SIG_DFL   ? "default"
               : sa.sa_handler == SIG_IGN ? "ignore"
                                          : "handler");
    }
    printf("\n");
}

/* Descriptors by kind, but for the shim's two, open on its claim
 * directory's top and its claims/: the only difference the shim may
 * make. */
static void descriptors(const char *when)
{
    char link[64], target[256];
    int shims = 0;

    printf("descriptors %s:", when);
    for (int fd = 0; fd < 1024; fd++) {
        ssize_t n;
        if (fcntl(fd, F_GETFD) < 0)
            continue;
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        n = readlink(link, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        if (strstr(target, "/swerve-claim.") != NULL) {
            shims++;
            continue;
        }
        printf(" %d:%s", fd,
               strncmp(target, "pipe:", 5) == 0   ? "pipe"
               : strncmp(target, "/dev/", 5) == 0 ? target
                                                  : "file");
    }
    printf("\n");
    if (shims > 2)
        printf("the shim has %d descriptors open, not two\n", shims);
}

static void on_usr1(int sig)
{
    (void)sig;
}

static pid_t child_exiting(int code)
{
    pid_t pid;

    fflush(stdout);
    pid = fork();
    if (pid == 0)
        _exit(code);
    return pid;
}

static void *system_sleeping(void *arg)
{
    (void)arg;
    /* Cancelled while it waits: what it would return is never read. */
    return (void *)(intptr_t)system("exec sleep 30");
}

static void on_int(int sig)
{
    (void)sig;
}

/* What system() and popen() promise beyond running a command: the
 * signals the shell gets and the caller keeps, and popen's modes. */
static void system_and_popen(void)
{
    static const char *const bad_modes[] = { "rw", "x", "", "r+" };
    sigset_t mask;
    pthread_t thread;
    void *result;
    FILE *p, *q;

    printf("system(NULL): %d\n", system(NULL));
    signal(SIGINT, on_int);
    describe_status("system, SIGINT to the shell", system("kill -INT $$; exit 4"));
    signal(SIGQUIT, SIG_IGN);
    describe_status("system, SIGQUIT ignored", system("kill -QUIT $$; exit 5"));
    signal(SIGQUIT, SIG_DFL);
    /* Cancelled while it waits, system kills its shell and restores the
     * dispositions on the way out. */
    pthread_create(&thread, NULL, system_sleeping, NULL);
    usleep(100 * 1000);
    pthread_cancel(thread);
    pthread_join(thread, &result);
    printf("system cancelled: %d\n", result == PTHREAD_CANCELED);
    sigprocmask(SIG_SETMASK, NULL, &mask);
    printf("after system: SIGCHLD blocked %d, SIGINT %s\n", sigismember(&mask, SIGCHLD),
           signal(SIGINT, SIG_DFL) == on_int ? "handler" : "changed");

    fflush(stdout);
    p = popen("cat; exit 6", "w");
    fputs("popen w says hello\n", p);
    describe_status("pclose w", pclose(p));
    for (int e = 0; e < 2; e++) {
        p = popen("true", e ? "re" : "r");
        printf("popen %s: close-on-exec %d\n", e ? "re" : "r", (fcntl(fileno(p), F_GETFD) & FD_CLOEXEC) != 0);
        describe_status("pclose", pclose(p));
    }
    for (size_t i = 0; i < sizeof bad_modes / sizeof bad_modes[0]; i++) {
        errno = 0;
        p = popen("true", bad_modes[i]);
        printf("popen mode \"%s\": %s errno %s\n", bad_modes[i], p == NULL ? "NULL" : "a stream",
               strerrorname_np(errno));
    }
    /* The second child must not hold the first one's pipe open: the
     * first cat sees its end of input and pclose returns. */
    alarm(10);
    p = popen("cat >/dev/null; exit 7", "w");
    q = popen("cat >/dev/null; exit 8", "w");
    describe_status("pclose first of two", pclose(p));
    describe_status("pclose second of two", pclose(q));
    alarm(0);
}

int main(void)
{
    static const char *const echo_argv[] = { "echo", "exec'd echo says hello", NULL };
    struct rusage ru;
    siginfo_t info;
    int status, r;
    pid_t pid;

    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGUSR1, on_usr1);
    signal(SIGPIPE, SIG_IGN);
    dispositions("at start");
    descriptors("at start");

    for (int code = 0; code < 4; code++) {
        pid = child_exiting(code);
        printf("waitpid returned the child: %d\n", waitpid(pid, &status, 0) == pid);
        describe_status("child", status);
    }
    for (int i = 0; i < 2; i++) {
        int sig = i == 0 ? SIGTERM : SIGKILL;
        fflush(stdout);
        pid = fork();
        if (pid == 0) {
            for (;;)
                pause();
        }
        kill(pid, sig);
        printf("wait4 returned the child: %d\n", wait4(pid, &status, 0, &ru) == pid);
        describe_status("signalled child", status);
    }
    pid = child_exiting(9);
    printf("wait3: %d\n", wait3(&status, 0, &ru) == pid);
    describe_status("wait3", status);
    pid = child_exiting(10);
    printf("wait: %d\n", wait(&status) == pid);
    describe_status("wait", status);
    /* Each call is made before the printf that shows it: C does not say
     * in which order a call's arguments are evaluated. */
    pid = child_exiting(11);
    memset(&info, 0, sizeof info);
    r = waitid(P_PID, (id_t)pid, &info, WEXITED);
    printf("waitid: %d pid %d code %d status %d\n", r, info.si_pid == pid, info.si_code, info.si_status);
    pid = child_exiting(12);
    memset(&info, 0, sizeof info);
    r = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT);
    printf("waitid WNOWAIT: %d pid %d code %d", r, info.si_pid == pid, info.si_code);
    printf(" then waitpid %d\n", waitpid(pid, &status, 0) == pid);

    errno = 0;
    r = (int)waitpid(-1, &status, 0);
    printf("waitpid with no child: %d errno %s\n", r, strerrorname_np(errno));
    /* A status pointer the kernel cannot write: EFAULT, and the child is
     * reaped all the same. */
    for (int v = 0; v < 4; v++) {
        int *bad = (int *)(uintptr_t)8;
        pid = child_exiting(13 + v);
        usleep(10000);
        errno = 0;
        r = v == 0   ? (int)waitpid(pid, bad, 0)
            : v == 1 ? (int)wait4(pid, bad, 0, &ru)
            : v == 2 ? (int)wait3(bad, 0, &ru)
                     : (int)wait(bad);
        printf("wait variant %d with a bad status pointer: %d errno %s", v, r, strerrorname_np(errno));
        errno = 0;
        r = (int)waitpid(pid, &status, WNOHANG);
        printf(", then waitpid %d errno %s\n", r, strerrorname_np(errno));
    }
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        usleep(200000);
        _exit(0);
    }
    errno = 0;
    r = (int)waitpid(pid, &status, WNOHANG);
    printf("waitpid WNOHANG on a running child: %d errno %d\n", r, errno);
    waitpid(pid, &status, 0);

    /* Every exec variant, each in a child whose output is ours. */
    static const char *const variants[] = { "execv", "execvp", "execve", "execvpe",
                                            "execl", "execlp", "execle", "fexecve" };
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        fflush(stdout);
        pid = fork();
        if (pid == 0) {
            const char *v = variants[i];
            printf("%s: ", v);
            fflush(stdout);
            if (strcmp(v, "execv") == 0)
                execv("/bin/echo", (char *const *)echo_argv);
            if (strcmp(v, "execvp") == 0)
                execvp("echo", (char *const *)echo_argv);
            if (strcmp(v, "execve") == 0)
                execve("/bin/echo", (char *const *)echo_argv, environ);
            if (strcmp(v, "execvpe") == 0)
                execvpe("echo", (char *const *)echo_argv, environ);
            if (strcmp(v, "execl") == 0)
                execl("/bin/echo", "echo", echo_argv[1], (char *)NULL);
            if (strcmp(v, "execlp") == 0)
                execlp("echo", "echo", echo_argv[1], (char *)NULL);
            if (strcmp(v, "execle") == 0)
                execle("/bin/echo", "echo", echo_argv[1], (char *)NULL, environ);
            if (strcmp(v, "fexecve") == 0) {
                int fd = open("/bin/echo", O_RDONLY | O_CLOEXEC);
                fexecve(fd, (char *const *)echo_argv, environ);
            }
            _exit(127);
        }
        waitpid(pid, &status, 0);
        describe_status(variants[i], status);
    }
    errno = 0;
    r = execv("/nonexistent/x", (char *const *)echo_argv);
    printf("execv of a missing program: %d errno %s\n", r, strerrorname_np(errno));

    for (int p = 0; p < 2; p++) {
        printf("%s: ", p == 0 ? "posix_spawn" : "posix_spawnp");
        fflush(stdout);
        r = p == 0 ? posix_spawn(&pid, "/bin/echo", NULL, NULL, (char *const *)echo_argv, environ)
                   : posix_spawnp(&pid, "echo", NULL, NULL, (char *const *)echo_argv, environ);
        waitpid(pid, &status, 0);
        printf("returned %d\n", r);
        describe_status("spawned", status);
    }
    fflush(stdout);
    status = system("echo system says hello; exit 3");
    describe_status("system", status);
    {
        FILE *p = popen("echo popen says hello", "r");
        char line[128];
        if (p != NULL && fgets(line, sizeof line, p) != NULL)
            printf("popen read: %s", line);
        describe_status("pclose", p != NULL ? pclose(p) : -1);
    }

    system_and_popen();

    dispositions("at end");
    descriptors("at end");
    return 42;
}
