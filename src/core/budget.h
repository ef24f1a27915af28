/* SPDX-License-Identifier: MIT */
/*
 * The budgets of every walk a process makes over what a less privileged
 * process can write: claim directories' entries, holder files and their
 * journals, waiters' FIFOs, the base, another process's descriptors,
 * database rows.  A worker may plant any number of any of them, and the
 * walker is often its root master (in waitpid(), at its exit) or root's
 * tools; so each walk spends from a budget fixed here, never from what
 * it finds, and says so when it gives up.
 *
 * This is the one table of them.  Each SCL_BUDGET_* has its row in
 * doc/security.md's "Every walk and its bound" (tests/packaging/budgets.sh
 * fails on a budget without its row): a new walk cannot land without one.
 */
#ifndef SCL_BUDGET_H
#define SCL_BUDGET_H

/* A journal is read, and written, up to this many bytes. */
#define SCL_BUDGET_JOURNAL_BYTES (64 * 1024)
/* Entries of claims/ a clearer of another process reads for links its
 * journal did not name (about 1 ms). */
#define SCL_BUDGET_CLEAR_SCAN 4096u
/* Entries of claims/ one removal of a directory reads in all, the
 * clearings of its dead holders included (each name a journal names
 * counts as one: a look for it); a holder file it opens counts as
 * SCL_COST_OPENED_FILE entries (an open, a read, a stat, a close: about
 * 4 us).  Some 0.1 s of a master's end, whatever was planted. */
#define SCL_BUDGET_REMOVAL_ENTRIES 65536u
#define SCL_COST_OPENED_FILE       4u
/* Leftovers (".new.*", ".wait.*") one removal by the library unlinks. */
#define SCL_BUDGET_RETIRE_LEFTOVERS 4096u
/* Entries of the base one sweep of abandoned directories reads, and how
 * many of them it looks at closely. */
#define SCL_BUDGET_SWEEP_ENTRIES    4096u
#define SCL_BUDGET_SWEEP_CANDIDATES 64u
/* Reads of a FIFO's bytes (of SCL_BUDGET_FIFO_CHUNK each) one take of
 * wake-ups makes. */
#define SCL_BUDGET_FIFO_READS 16u
#define SCL_BUDGET_FIFO_CHUNK 512u
/* Entries of one claims/ the tools read: past it the directory is
 * refused whole, named with its owner. */
#define SCL_BUDGET_DIR_ENTRIES 65536u
/* What one load of claim directories by a tool (every directory below
 * the bases it looks in) reads in all: entries of their claims/ (each
 * read of one counts), directories looked at, and bytes kept of members,
 * claims and names.  Past one of them, the directory being read and
 * every one after it are left out whole, each named; the tool's own and
 * root's are read first. */
#define SCL_BUDGET_LOAD_ENTRIES (4u * SCL_BUDGET_DIR_ENTRIES)
#define SCL_BUDGET_LOAD_DIRS    1024u
#define SCL_BUDGET_LOAD_BYTES   (8u * 1024 * 1024)
/* Descriptors of a process (/proc/PID/fd) the tools look at to find
 * where it keeps its claims (--server PID, -p), and directories among
 * them, each once, whose path they read and check. */
#define SCL_BUDGET_PROCESS_FDS  65536u
#define SCL_BUDGET_PROCESS_DIRS 64u
/* Bytes of a process's /proc/PID/environ the tools read for its
 * settings: an environment is at most a few hundred kilobytes (ARG_MAX
 * is shared with the arguments); settings past this are not looked for. */
#define SCL_BUDGET_ENVIRON_BYTES (256 * 1024)
/* Rows of the PostgreSQL store's history root's history reads (16 a
 * name, and any member may register names and draw tokens for them):
 * past it the first, by name, are shown, and it says so.  A row is at
 * most about 8 KiB (a 4,096-byte name, in hex). */
#define SCL_BUDGET_PG_HISTORY_ROWS 8192u
/* How long one of a tool's statements on the PostgreSQL store may take:
 * root's tools must not wait for ever on a session that keeps a table of
 * the schema locked (only its owner or a superuser can: members read
 * them, and write holds only through functions). */
#define SCL_BUDGET_PG_STATEMENT_NS (10 * 1000000000LL)

/* One walk's budget: what it is (for the word it says as it gives up),
 * how much it had, how much is left. */
struct scl_budget {
    const char *walk;
    unsigned long limit, left;
    int gave_up;
};

static inline struct scl_budget scl_budget_of(const char *walk, unsigned long limit)
{
    struct scl_budget b = { walk, limit, limit, 0 };
    return b;
}

/* Spends N of B: 0 while it lasts; -1 once it does not, the first time
 * with a SWERVE_DEBUG line naming the walk and its bound (a tool says so
 * itself, looking at gave_up).  Async-signal-safe, keeps errno. */
int scl_budget_spend(struct scl_budget *b, unsigned long n);

#endif
