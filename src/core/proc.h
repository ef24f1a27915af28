/* SPDX-License-Identifier: MIT */
/*
 * Who a process is, in a way that survives pid reuse: its pid plus its
 * start time (clock ticks since boot, field 22 of /proc/PID/stat).  All of
 * it is async-signal-safe.
 */
#ifndef SCL_PROC_H
#define SCL_PROC_H

#include <limits.h>
#include <sys/types.h>

/* The largest pid a file may name (pid_t is an int): larger numbers in a
 * holder file are not pids. */
#define SCL_PID_MAX INT_MAX

struct scl_proc_id {
    pid_t pid;
    unsigned long long start; /* 0 when /proc could not tell (a chroot) */
};

struct scl_proc_stat {
    char state; /* 'R', 'S', 'Z', ... */
    pid_t ppid;
    unsigned long long start;
};

/* Parses one /proc/PID/stat line; -1 with errno EINVAL when malformed. */
int scl_proc_parse_stat(const char *line, struct scl_proc_stat *st);

/* Reads /proc/PID/stat; -1 with errno (ENOENT: no such process). */
int scl_proc_read_stat(pid_t pid, struct scl_proc_stat *st);

/* The command line of process PID (0: this one), its arguments joined
 * by spaces and trailing ones dropped, into OUT (CAP bytes, cut to fit):
 * its length, or -1 with errno (ENOENT: no such process; 0 bytes for a
 * kernel thread or a zombie). */
ssize_t scl_proc_read_cmdline(pid_t pid, char *out, size_t cap);

/* The systemd service process PID runs in ("nginx.service": the last
 * ".service" of its /proc/PID/cgroup, which the kernel writes) into OUT
 * (CAP bytes): 0, or -1 when it runs in none, or has ended. */
int scl_proc_read_unit(pid_t pid, char *out, size_t cap);

/* The same from the N bytes of such a file at CGROUP. */
int scl_proc_parse_unit(const char *cgroup, size_t n, char *out, size_t cap);

/* 1 when process PID's main thread has children now (it forked, and they
 * live), 0 when not, -1 when /proc cannot tell (a kernel without
 * CONFIG_PROC_CHILDREN, or it has ended). */
int scl_proc_has_children(pid_t pid);

/* The TracerPid of a /proc/PID/status text (STATUS, NUL-terminated): the
 * pid of the process tracing it (a debugger), 0 when none; -1 with errno
 * EINVAL when the line is missing or malformed. */
pid_t scl_proc_parse_tracer(const char *status);

/* The Uid line of a /proc/PID/status text into UIDS (real, effective,
 * saved, filesystem): 0, or -1 with errno EINVAL. */
int scl_proc_parse_uids(const char *status, uid_t uids[4]);

/* Read from process PID's /proc/PID/status, as above; -1 with errno
 * (ENOENT: no such process). */
pid_t scl_proc_read_tracer(pid_t pid);
int scl_proc_read_uids(pid_t pid, uid_t uids[4]);

/* The value of NAME in an environment block (NUL-separated NAME=VALUE
 * strings, LEN bytes, as /proc/PID/environ), as getenv() would find it:
 * the first definition, whole (a last one cut short by LEN does not
 * count); NULL when there is none. */
const char *scl_env_block_value(const char *block, size_t len, const char *name);

/* Reads process PID's /proc/PID/environ into OUT (at most CAP - 1 bytes,
 * NUL-terminated): its length, or -1 with errno (EACCES: another user's
 * process, for anybody but root). */
ssize_t scl_proc_read_environ(pid_t pid, char *out, size_t cap);

/* This process's pid without a system call once known: kept in a page
 * that the kernel blanks in every child that gets a copy of the memory
 * (MADV_WIPEONFORK, Linux 4.14: fork, or clone without CLONE_VM), so that
 * no such child takes its parent's for its own; getpid() each time where
 * there is no such page.  A child that shares the memory (vfork, CLONE_VM
 * without CLONE_THREAD) shares the page too, as it shares all of the
 * library's state: the API is not for it, and the hooks, which run there,
 * call getpid() themselves. */
pid_t scl_proc_self_pid(void);

/* The calling thread's id: a system call the first time in a thread
 * (gettid() is in glibc only since 2.30), then kept for it. */
pid_t scl_proc_self_tid(void);

/* This process's identity, read once per pid. */
struct scl_proc_id scl_proc_self(void);

enum scl_proc_state {
    SCL_PROC_ALIVE,  /* it runs (or is stopped) */
    SCL_PROC_GONE,   /* it has ended: a zombie counts as ended */
    SCL_PROC_REUSED, /* another process has its pid now (another start time) */
};

/* What has become of the process ID names.  Without /proc, a process
 * that exists is taken to be alive. */
enum scl_proc_state scl_proc_state(const struct scl_proc_id *id);

/* 1 while the process ID names is alive (scl_proc_state), else 0. */
int scl_proc_alive(const struct scl_proc_id *id);

#endif
