/*
 * The claim store: where claims live.  The public API (api.c) only talks
 * to this interface, so that a second store (PostgreSQL advisory locks,
 * for servers on several machines) can sit beside the filesystem one.
 */
#ifndef SCL_STORE_H
#define SCL_STORE_H

#include "names.h"
#include "wake.h"

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

/* A claim name as the store knows it; made once per handle. */
struct scl_key {
    char fname[SCL_FNAME_MAX]; /* the name's file name (names.h) */
    char *journal_line;        /* what the holder's journal records */
    size_t journal_len;
    pid_t journaled_pid;    /* the process, and directory generation, */
    unsigned journaled_gen; /* that journaled it already */
    int revocations_known;  /* when the name was taken: 1 and the count */
    unsigned revocations;   /* of forced releases (wake.h), or 0 */
};

/* A waiter's state, kept by the caller for the store. */
struct scl_wait {
    struct scl_wake_ticket ticket;
};

struct scl_store_ops {
    /* 0, or -1 with errno (ENOMEM). */
    int (*key_init)(struct scl_key *key, const char *name, size_t len);
    void (*key_fini)(struct scl_key *key);
    /* Takes the name once for process SELF (the caller's pid): 0, or -1
     * with errno EWOULDBLOCK when a live process holds it, or the system
     * error. */
    int (*try_acquire)(struct scl_key *key, pid_t self);
    /* Gives up a name this process holds: 0, or -1 with errno. */
    int (*release)(struct scl_key *key);
    /* 1 nobody holds the name, 0 somebody does, -1 with errno. */
    int (*available)(const struct scl_key *key);
    /* Waiting for a name: enter once, arm before each try, sleep between
     * tries (up to REL, less when the holder lets go or a signal comes),
     * leave at the end.  Without wake-ups, sleeping just sleeps. */
    void (*wait_enter)(struct scl_wait *w, const struct scl_key *key);
    void (*wait_arm)(struct scl_wait *w);
    void (*wait_sleep)(struct scl_wait *w, const struct timespec *rel);
    void (*wait_leave)(struct scl_wait *w);
};

/* The filesystem store: claims as hard links (holder.h, dir.h). */
extern const struct scl_store_ops scl_store_fs;

#endif
