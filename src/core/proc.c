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

int scl_proc_read_stat(pid_t pid, struct scl_proc_stat *st)
{
    /* The fields up to the start time take at most 320 bytes (a 15-byte
     * command name, and every number at its widest). */
    char path[40], num[24], line[512];
    ssize_t n;
    int fd;

    scl_fmt_ull(num, (unsigned long long)pid);
    if (scl_concat(path, sizeof path, "/proc/", num, "/stat", (char *)NULL) != 0)
        return -1;
    fd = scl_openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    n = scl_read_full(fd, line, sizeof line - 1);
    scl_close_quietly(fd);
    if (n <= 0) {
        errno = n == 0 ? ENOENT : errno; /* a process that ended mid-read */
        return -1;
    }
    line[n] = '\0';
    return scl_proc_parse_stat(line, st);
}

ssize_t scl_proc_read_cmdline(pid_t pid, char *out, size_t cap)
{
    char path[40], num[24];
    ssize_t n;
    int fd;

    scl_fmt_ull(num, (unsigned long long)pid);
    if (scl_concat(path, sizeof path, "/proc/", pid != 0 ? num : "self", "/cmdline", (char *)NULL) != 0)
        return -1;
    fd = scl_openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    n = scl_read_full(fd, out, cap - 1);
    scl_close_quietly(fd);
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
    } else if (kill(id->pid, 0) != 0 && errno == ESRCH) {
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
