/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "proc.h"
#include "sigsafe.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int scl_proc_parse_stat(const char *line, struct scl_proc_stat *st)
{
    /* The command name may hold spaces and parentheses: fields are
     * counted from its last ')'. */
    const char *p = strrchr(line, ')');
    unsigned long long v;

    if (p == NULL || p[1] != ' ' || p[2] == '\0')
        goto malformed;
    st->state = p[2];
    p += 3;
    for (int field = 4; field <= 22; field++) {
        if (*p != ' ')
            goto malformed;
        p++;
        if (*p == '-')
            p++; /* tty_nr, priority and nice may be negative: skipped */
        if (scl_parse_ull(&p, &v) != 0)
            goto malformed;
        if (field == 4)
            st->ppid = (pid_t)v;
        if (field == 22)
            st->start = v;
    }
    return 0;
malformed:
    errno = EINVAL;
    return -1;
}

/* Reads /proc/PID/FILE (PID 0: this process's) into OUT, NUL-terminated,
 * at most CAP - 1 bytes: how many, or -1 with errno. */
static ssize_t read_proc_file(pid_t pid, const char *file, char *out, size_t cap)
{
    char path[64], num[24];
    ssize_t n;
    int fd;

    scl_fmt_ull(num, (unsigned long long)pid);
    if (scl_concat(path, sizeof path, "/proc/", pid != 0 ? num : "self", "/", file, (char *)NULL) != 0)
        return -1;
    fd = scl_openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    n = scl_read_full(fd, out, cap - 1);
    scl_close_quietly(fd);
    if (n >= 0)
        out[n] = '\0';
    return n;
}

int scl_proc_read_stat(pid_t pid, struct scl_proc_stat *st)
{
    /* The fields up to the start time take at most 320 bytes (a 15-byte
     * command name, and every number at its widest). */
    char line[512];
    ssize_t n = read_proc_file(pid, "stat", line, sizeof line);

    if (n <= 0) {
        errno = n == 0 ? ENOENT : errno; /* a process that ended mid-read */
        return -1;
    }
    return scl_proc_parse_stat(line, st);
}

/* The numbers of line FIELD ("\nTracerPid:", "\nUid:") of a
 * /proc/PID/status text into OUT: 0 when it has WANT of them, each a pid
 * or uid (at most SCL_PID_MAX), separated by blanks; else -1 with EINVAL. */
static int status_numbers(const char *status, const char *field, unsigned long long *out, int want)
{
    const char *at = strstr(status, field);

    if (at == NULL)
        goto malformed;
    at += strlen(field);
    for (int i = 0; i < want; i++) {
        int digits = 0;
        for (; *at == ' ' || *at == '\t'; at++)
            ;
        for (out[i] = 0; *at >= '0' && *at <= '9' && out[i] <= SCL_PID_MAX; at++, digits++)
            out[i] = out[i] * 10 + (unsigned long long)(*at - '0');
        if (digits == 0 || out[i] > SCL_PID_MAX)
            goto malformed;
    }
    if (*at == '\n' || *at == '\0')
        return 0;
malformed:
    errno = EINVAL;
    return -1;
}

pid_t scl_proc_parse_tracer(const char *status)
{
    unsigned long long tracer;

    return status_numbers(status, "\nTracerPid:", &tracer, 1) == 0 ? (pid_t)tracer : -1;
}

int scl_proc_parse_uids(const char *status, uid_t uids[4])
{
    unsigned long long u[4];

    if (status_numbers(status, "\nUid:", u, 4) != 0)
        return -1;
    for (int i = 0; i < 4; i++)
        uids[i] = (uid_t)u[i];
    return 0;
}

/* /proc/PID/status's first 512 bytes, into STATUS: its TracerPid and Uid
 * lines are the eighth and ninth, after a command name of at most 15
 * bytes (escaped at most 4 to 1); the library's stack budget (1 KiB)
 * allows no more.  0, or -1 with errno. */
static int read_status(pid_t pid, char status[512])
{
    ssize_t n = read_proc_file(pid, "status", status, 512);

    if (n <= 0) {
        errno = n == 0 ? ENOENT : errno;
        return -1;
    }
    return 0;
}

pid_t scl_proc_read_tracer(pid_t pid)
{
    char status[512];

    return read_status(pid, status) == 0 ? scl_proc_parse_tracer(status) : -1;
}

int scl_proc_read_uids(pid_t pid, uid_t uids[4])
{
    char status[512];

    return read_status(pid, status) == 0 ? scl_proc_parse_uids(status, uids) : -1;
}

const char *scl_env_block_value(const char *block, size_t len, const char *name)
{
    size_t name_len = strlen(name);

    for (size_t at = 0; at < len;) {
        const char *entry = block + at, *end = memchr(entry, '\0', len - at);
        if (end == NULL)
            return NULL; /* cut short */
        if ((size_t)(end - entry) > name_len && memcmp(entry, name, name_len) == 0 && entry[name_len] == '=')
            return entry + name_len + 1;
        at += (size_t)(end - entry) + 1;
    }
    return NULL;
}

ssize_t scl_proc_read_environ(pid_t pid, char *out, size_t cap)
{
    return read_proc_file(pid, "environ", out, cap);
}

ssize_t scl_proc_read_cmdline(pid_t pid, char *out, size_t cap)
{
    ssize_t n = read_proc_file(pid, "cmdline", out, cap);

    if (n < 0)
        return -1;
    for (ssize_t i = 0; i < n; i++)
        if (out[i] == '\0')
            out[i] = ' ';
    while (n > 0 && out[n - 1] == ' ')
        n--;
    out[n] = '\0';
    return n;
}

int scl_proc_parse_unit(const char *cgroup, size_t n, char *out, size_t cap)
{
    const char *unit = NULL;
    size_t len = 0;

    for (size_t i = 0, start = 0; i <= n; i++) {
        if (i < n && cgroup[i] != '/' && cgroup[i] != '\n')
            continue;
        if (i - start > 8 && memcmp(cgroup + i - 8, ".service", 8) == 0) {
            unit = cgroup + start;
            len = i - start;
        }
        start = i + 1;
    }
    if (unit == NULL || len >= cap)
        return -1;
    memcpy(out, unit, len);
    out[len] = '\0';
    return 0;
}

int scl_proc_read_unit(pid_t pid, char *out, size_t cap)
{
    /* One line a hierarchy, "0::/system.slice/nginx.service" on cgroup
     * v2 (one line): the kernel's, whatever the process wrote of itself.
     * The first 511 bytes: the hook paths' stack budget is core's. */
    char cgroup[512];
    ssize_t n = read_proc_file(pid, "cgroup", cgroup, sizeof cgroup);

    return n > 0 ? scl_proc_parse_unit(cgroup, (size_t)n, out, cap) : -1;
}

int scl_proc_has_children(pid_t pid)
{
    char file[48], num[24], children[24];

    scl_fmt_ull(num, (unsigned long long)pid);
    if (scl_concat(file, sizeof file, "task/", num, "/children", (char *)NULL) != 0)
        return -1;
    /* "PID PID ...": its first bytes tell whether there is one. */
    return read_proc_file(pid, file, children, sizeof children) < 0 ? -1 : children[0] != '\0';
}

static _Atomic(_Atomic pid_t *) pid_page;
static atomic_int pid_page_unavailable;

static _Atomic pid_t *map_pid_page(void)
{
    size_t size = (size_t)sysconf(_SC_PAGESIZE);
    _Atomic pid_t *expected = NULL,
                  *page = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (page == MAP_FAILED) {
        atomic_store(&pid_page_unavailable, 1);
        return NULL;
    }
    if (madvise(page, size, MADV_WIPEONFORK) != 0) {
        (void)munmap(page, size);
        atomic_store(&pid_page_unavailable, 1);
        return NULL;
    }
    if (!atomic_compare_exchange_strong(&pid_page, &expected, page)) {
        (void)munmap(page, size);
        return expected; /* another thread was first */
    }
    return page;
}

/* Per thread (initial-exec, as a preloaded library's TLS must be): the
 * process it was read in (a forked child is another) in the high half,
 * its id in the low, in one word that a signal handler on this thread
 * finds either whole or not yet written. */
static __thread _Atomic uint64_t tid_in_pid __attribute__((tls_model("initial-exec")));

pid_t scl_proc_self_tid(void)
{
    uint64_t pid = (uint32_t)scl_proc_self_pid(), known = atomic_load_explicit(&tid_in_pid, memory_order_relaxed);
    pid_t tid;

    if (known >> 32 == pid && (uint32_t)known != 0)
        return (pid_t)(uint32_t)known;
    tid = (pid_t)syscall(SYS_gettid);
    atomic_store_explicit(&tid_in_pid, pid << 32 | (uint32_t)tid, memory_order_relaxed);
    return tid;
}

pid_t scl_proc_self_pid(void)
{
    _Atomic pid_t *page = atomic_load_explicit(&pid_page, memory_order_acquire);
    pid_t pid;
    int saved;

    if (page != NULL && (pid = atomic_load_explicit(page, memory_order_relaxed)) != 0)
        return pid;
    pid = getpid();
    if (page == NULL && !atomic_load(&pid_page_unavailable)) {
        saved = errno;
        page = map_pid_page();
        errno = saved;
    }
    if (page != NULL) {
        /* Asked again once stored, and put right only where it still
         * stands: a child forked in a signal handler between the first
         * ask and the store would otherwise keep its parent's pid for
         * good, and one forked after it has a blank page to leave so. */
        pid_t stored = pid;
        atomic_store(page, stored);
        pid = getpid();
        if (pid != stored)
            (void)atomic_compare_exchange_strong(page, &stored, pid);
    }
    return pid;
}

/* One cache per process: a forked child has another pid, so it rereads. */
static _Atomic pid_t self_pid;
static _Atomic unsigned long long self_start;

struct scl_proc_id scl_proc_self(void)
{
    struct scl_proc_id id = { .pid = getpid(), .start = 0 };
    struct scl_proc_stat st;

    if (atomic_load(&self_pid) == id.pid) {
        id.start = atomic_load(&self_start);
        return id;
    }
    if (scl_proc_read_stat(id.pid, &st) == 0)
        id.start = st.start;
    atomic_store(&self_start, id.start);
    atomic_store(&self_pid, id.pid);
    return id;
}

enum scl_proc_state scl_proc_state(const struct scl_proc_id *id)
{
    struct scl_proc_stat st;
    enum scl_proc_state state = SCL_PROC_ALIVE;
    int saved = errno;

    if (id->pid <= 0) {
        state = SCL_PROC_GONE;
    } else if (scl_kill(id->pid, 0) != 0 && errno == ESRCH) {
        state = SCL_PROC_GONE;
    } else if (scl_proc_read_stat(id->pid, &st) == 0) {
        if (st.state == 'Z' || st.state == 'X')
            state = SCL_PROC_GONE;
        else if (id->start != 0 && st.start != id->start)
            state = SCL_PROC_REUSED;
    } else if (errno == ENOENT && access("/proc/self/stat", F_OK) == 0) {
        state = SCL_PROC_GONE; /* /proc works and the process is gone */
    }
    errno = saved;
    return state;
}

int scl_proc_alive(const struct scl_proc_id *id)
{
    return scl_proc_state(id) == SCL_PROC_ALIVE;
}
