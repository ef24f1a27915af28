/*
 * The claim store: where claims live.  The public API (api.c) only talks
 * to this interface, so that a second store (PostgreSQL advisory locks,
 * for servers on several machines) can sit beside the filesystem one.
 */
#ifndef SCL_STORE_H
#define SCL_STORE_H

#include "names.h"

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

/* A claim name as the store knows it; made once per handle. */
struct scl_key {
    char fname[SCL_FNAME_MAX]; /* the name's file name (names.h) */
    char *journal_line;        /* what the holder's journal records */
    size_t journal_len;
    pid_t journaled_pid;       /* the process, and directory generation, */
    unsigned journaled_gen;    /* that journaled it already */
};

struct scl_waiter;

struct scl_store_ops {
    /* 0, or -1 with errno (ENOMEM). */
    int (*key_init)(struct scl_key *key, const char *name, size_t len);
    void (*key_fini)(struct scl_key *key);
    /* Takes the name once: 0, or -1 with errno EWOULDBLOCK when a live
     * process holds it, or the system error. */
    int (*try_acquire)(struct scl_key *key);
    /* Gives up a name this process holds: 0, or -1 with errno. */
    int (*release)(struct scl_key *key);
    /* 1 nobody holds the name, 0 somebody does, -1 with errno. */
    int (*available)(const struct scl_key *key);
    /* A way to sleep until the holder of a name may have let go; NULL
     * when none can be had, and the caller then polls. */
    struct scl_waiter *(*waiter_new)(void);
    void (*waiter_arm)(struct scl_waiter *w, const struct scl_key *key);
    /* Sleeps up to REL, less when woken or interrupted by a signal. */
    void (*waiter_sleep)(struct scl_waiter *w, const struct timespec *rel);
    void (*waiter_free)(struct scl_waiter *w);
};

/* The filesystem store: claims as hard links (holder.h, serverdir.h). */
extern const struct scl_store_ops scl_store_fs;

#endif
