/* SPDX-License-Identifier: MIT */
/*
 * What a claim store does for the tools (swerve-claim), and only for
 * them: this is built into libscl_admin.la, which the tools link and the
 * preloaded library does not, so that no host under the shim carries the
 * tools' code (store.h is what the API and the hooks use).
 *
 * A store says what it can do in one set of capabilities, `can`; an
 * operation outside its set is NULL, and the tools ask `can`, never the
 * pointer.
 *
 * What a store's session decides as it is set up (struct
 * scl_store_reached) is the store's own record, kept by the library's
 * code too: only the type is shared, so that db check says what the
 * library decided, not what a second look at the server guessed.
 */
#ifndef SCL_STORE_ADMIN_H
#define SCL_STORE_ADMIN_H

#include "store.h"

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* One holder or waiter of a claim, as the tools list them.  In a shared
 * store, what the server knows of a session (its number, role, address)
 * is apart from what the session says of itself (its host and pid), which
 * no server checks: the tools never present the one as the other. */
struct scl_listed {
    const char *name;    /* as the application wrote it */
    int held;            /* 1 its holder, 0 a waiter */
    int foreign;         /* 1 a session that is not the library's: host is then its address, pid 0 */
    const char *host;    /* the host the library's session says it runs on, else its address; "" unknown */
    long pid;            /* its process there, as the session says; 0 when unknown */
    long session;        /* its session in the store's server, 0 when none */
    const char *role;    /* the session's role, as the server knows it; "" unknown or none */
    const char *address; /* where it connects from, as the server saw it ("[local]"); "" unknown */
    const char *says;    /* what the session calls itself, unverified; "" nothing */
    time_t connected;    /* when the session began, 0 when unknown */
    time_t since;        /* held or waiting since, 0 when unknown */
    uint64_t token;      /* the hold's fencing token, 0 when unknown or waiting */
};
typedef void scl_listed_fn(const struct scl_listed *row, void *arg);

/* Who can reach a shared store, as init() leaves it. */
struct scl_store_access {
    char database[64];    /* its database's name */
    int public_connects;  /* 1 every role may connect, and so take any claim */
    int members_connect;  /* 1 the claims' role may connect */
    long foreign_holders; /* claims held now by sessions that are not the library's */
};

/* What is between this process and a shared store's server, as the
 * store's session decided it at set-up. */
enum scl_admin_pooler {
    SCL_ADMIN_POOLER_UNSEEN,      /* no connection was made */
    SCL_ADMIN_POOLER_NONE,        /* the session is the server's own */
    SCL_ADMIN_POOLER_NOT_PROBED,  /* a pooler is in between; refused for another reason before its mode */
    SCL_ADMIN_POOLER_HANDED_ON,   /* the server session is not new, another client's: refused */
    SCL_ADMIN_POOLER_TRANSACTION, /* server sessions changed hands: transaction or statement mode, refused */
    SCL_ADMIN_POOLER_UNTOLD,      /* a pooler whose mode cannot be told, not declared: refused */
    SCL_ADMIN_POOLER_DECLARED,    /* one declared a session pooler (SWERVE_CLAIM_POOLER=session): accepted */
};

/* How far the last opening of a shared store's session got. */
struct scl_store_reached {
    int reached;                                      /* 1 a connection was made: the rest is its */
    char host[128], port[16], database[64], role[64]; /* as the client library reached them */
    int standby;                                      /* the server is one: refused */
    int server_version;                               /* server_version_num; 0 unknown */
    enum scl_admin_pooler pooler;
};

enum scl_admin_schema {
    SCL_ADMIN_SCHEMA_UNSEEN,  /* not looked at (no session) */
    SCL_ADMIN_SCHEMA_MISSING, /* db init never ran in this database */
    SCL_ADMIN_SCHEMA_OLD,     /* older than this store's code: db init again */
    SCL_ADMIN_SCHEMA_CLOSED,  /* there, but the session's role may not look inside */
    SCL_ADMIN_SCHEMA_READY,
};

/* What check() sees from this environment. */
struct scl_store_check {
    struct scl_store_reached seen; /* the session's set-up, as far as it got */
    int accepted;                  /* 1 the session was set up: a claim could be taken through it */
    char behind[80];               /* accepted: where the server says it is ("" a local socket) */
    char behind_port[16];
    enum scl_admin_schema schema; /* accepted: whether db init ran */
    int member;                   /* accepted: 1 the session's role may take claims (swerve_claim_user) */
    int access_read;              /* 1 ACCESS is filled (schema ready, role a member) */
    struct scl_store_access access;
};

/* A column of a store's listing (swerve-claim list -o NAME): the one
 * place its name and help are written.  --help prints the store in use's
 * (help.c), the bash completion offers what --help prints, and the
 * manual names each (tests/packaging/columns.sh). */
struct scl_admin_column {
    const char *name;
    double width;     /* characters, or a fraction of the terminal below 1 */
    unsigned flags;   /* enum scl_admin_column_flag */
    const char *help; /* what it shows, for --help: a few words, no line's end */
};

enum scl_admin_column_flag {
    SCL_COLUMN_USUAL = 1u << 0,    /* shown when no columns are asked for */
    SCL_COLUMN_TREE = 1u << 1,     /* draws the tree of rows */
    SCL_COLUMN_RIGHT = 1u << 2,    /* right-aligned */
    SCL_COLUMN_TRUNCATE = 1u << 3, /* may be cut to fit */
    SCL_COLUMN_NUMBER = 1u << 4,   /* a number in JSON */
    SCL_COLUMN_TIME = 1u << 5,     /* epoch seconds: a date for people, a number in JSON */
    SCL_COLUMN_DURATION = 1u << 6, /* seconds: "2m03s" for people, a number in JSON */
    SCL_COLUMN_SERVERS = 1u << 7,  /* shown when no columns are asked for and the rows shown are of more
                                    * than one value of it (more than one server's) */
};

/* SCL_ADMIN_DIRECTORIES: the claim directories a command works on, as
 * the store read them (load()); only the store looks inside. */
struct scl_admin_dirs;

/* Which rows a listing shows (list's and history's -n and -p, list's
 * --older-than and --stale).  With any of the last two, only claims are
 * shown (with their waiters), not the processes of a directory that hold
 * none. */
struct scl_admin_select {
    const char *name;     /* only this claim's rows, or NULL */
    long pid;             /* only this process's rows, or 0 */
    long long older_than; /* only claims held longer than this many seconds, or -1 */
    int stale;            /* SCL_ADMIN_DIRECTORIES: only claims whose holder is gone, stopped or unknown */
    const char *host;     /* SCL_ADMIN_SESSIONS: -p's host; NULL: this machine's name */
    /* SCL_ADMIN_DIRECTORIES: the directories to list, as load() read
     * them. */
    const struct scl_admin_dirs *dirs;
    /* SCL_ADMIN_DIRECTORIES, history: a named directory (the user's own
     * `run` namespace) whose history, kept beside it while it is not there,
     * is shown when it is not among DIRS; or NULL. */
    const char *kept;
};

/* One holder or waiter of a claim, for monitoring (swerve-claim
 * metrics), as a store knows it. */
struct scl_admin_sample {
    const char *name;   /* the claim's, as the application wrote it */
    const char *server; /* whose claim it is, in words a restart keeps: its server's systemd unit,
                         * else its master's command name (SCL_ADMIN_DIRECTORIES); the store's scope */
    long server_pid;    /* SCL_ADMIN_DIRECTORIES: its server's master, 0 when unknown */
    const char *host;   /* SCL_ADMIN_SESSIONS: the host its session says it runs on (a foreign one's
                         * address); NULL: every holder is this machine's */
    long pid;           /* 0 when unknown */
    const char *user;   /* its holder file's owner, or its session's role; "" unknown */
    const char *state;  /* as list says it: alive, stopped, gone, ... waiting; holder, foreign, ... */
    int held;           /* 1 a holder, 0 a waiter */
    int stale;          /* a holder that will never release it: gone, stopped, pid-reused or no
                         * member (list --stale's); the claim waits for gc or its next taker */
    time_t since;       /* held or waiting since, 0 when unknown */
};
typedef void scl_admin_sample_fn(const struct scl_admin_sample *sample, void *arg);

/* One row of a listing: VALUES holds one per column of the store's, ""
 * when empty (a time column's: epoch seconds, or "").  It goes at DEPTH:
 * 0 a top row, deeper rows under the last row one level up. */
typedef void scl_admin_row_fn(int depth, const char *const *values, void *arg);

/* How a store lists its claims for people: its columns (at most
 * SCL_ADMIN_MAX_COLUMNS), and its rows; and for monitoring, its
 * samples. */
#define SCL_ADMIN_MAX_COLUMNS 24
struct scl_admin_listing {
    const char *json_name; /* what JSON calls the rows */
    const struct scl_admin_column *columns;
    int ncolumns;
    /* Calls EACH for every row SEL selects: how many of them show a claim
     * that list's exit status counts (--name: a held or waited-for name;
     * --older-than, --stale: a held claim), or -1 with errno. */
    int (*rows)(const struct scl_admin_select *sel, scl_admin_row_fn *each, void *arg);
    /* Calls EACH for every holder and waiter of a claim in SEL's
     * directories (SCL_ADMIN_DIRECTORIES), or of the scope in use: 0, or
     * -1 with errno. */
    int (*samples)(const struct scl_admin_select *sel, scl_admin_sample_fn *each, void *arg);
};

/* What a store can do for the tools. */
enum scl_admin_can {
    /* Its holders are processes of this machine, in claim directories the
     * tools read, clear and join (a server's, by --server). */
    SCL_ADMIN_DIRECTORIES = 1u << 0,
    /* Its holders are sessions of a server, which it lists (list()) and
     * ends (end_holder()), from any machine. */
    SCL_ADMIN_SESSIONS = 1u << 1,
    /* It makes what it needs in its server, and may shut others out of
     * it (init(): db init). */
    SCL_ADMIN_SCHEMA = 1u << 2,
};

struct scl_admin_directories;

struct scl_store_admin {
    const char *name; /* the store, as the tools' messages name it */
    unsigned can;     /* enum scl_admin_can */
    /* Every store: swerve-claim list's columns and rows. */
    const struct scl_admin_listing *listing;
    /* Every store: swerve-claim history's, a row a hold (rows() counts
     * the holds shown). */
    const struct scl_admin_listing *history;

    /* SCL_ADMIN_SESSIONS: calls EACH for every holder and waiter of the
     * namespace in use: 0, or -1 with errno. */
    int (*list)(scl_listed_fn *each, void *arg);
    /* SCL_ADMIN_SESSIONS: ends the session that holds NAME, and so every
     * claim it holds (release --force): 1 and *WHO, 0 when nobody holds
     * it, or -1 with errno. */
    int (*end_holder)(const char *name, struct scl_listed *who);
    /* SCL_ADMIN_SCHEMA: creates what the store needs (its schema), and
     * when DEDICATED says the database is the claims' own, shuts every
     * other role out: 0 and *ACCESS, or -1 with errno. */
    int (*init)(int dedicated, struct scl_store_access *access);
    /* SCL_ADMIN_SCHEMA: opens the session as a claim would, and says what
     * it found (db check): 0 and *OUT when the session was set up and
     * looked at, or -1 with errno (reason() the words) and *OUT as far as
     * it got. */
    int (*check)(struct scl_store_check *out);

    /* Every store: what this process holds is made to outlive its exec
     * (swerve-claim run hands its claim to the command; a filesystem
     * store's holder file then says its image is exec'd): 0, or -1 with
     * errno. */
    int (*keep_across_exec)(void);
    /* Every store: the last message its server gave this process, or
     * NULL. */
    const char *(*reason)(void);
    /* SCL_ADMIN_SESSIONS: the namespace in use (SWERVE_CLAIM_SCOPE), for
     * messages. */
    const char *(*scope)(void);

    /* SCL_ADMIN_DIRECTORIES: the claim directories of this machine.  What
     * these say goes through the tool's printers (scl_admin_report(),
     * scl_admin_say()), and where they look is scl_admin_base()'s. */
    const struct scl_admin_directories *directories;
};

/* What a store of SCL_ADMIN_DIRECTORIES does for the tools. */
struct scl_admin_directories {
    /* Reads the directories a command works on into *DIRS: SERVER's
     * (select() names it) when not NULL, else every claim directory below
     * the base and those of the user's own `run` namespace, with, when
     * PID is not 0, those where process PID keeps its claims, wherever
     * that is: 0; how many were left out (too big to read, or past the
     * load's bound: said); -1 (said, and *DIRS untouched). */
    int (*load)(const char *server, long pid, struct scl_admin_dirs **dirs);
    /* How many directories DIRS holds. */
    size_t (*count)(const struct scl_admin_dirs *dirs);
    void (*free)(struct scl_admin_dirs *dirs);
    /* Where the last load looked ("/tmp, /srv/x"), for a message. */
    const char *(*looked)(void);

    /* The claim directory --server names, into OUT: a member's pid, a
     * pidfile holding one (a path to a regular file), a claim directory
     * (a path), or a systemd service, whose live master's is chosen
     * ("nginx" is nginx.service): 0; says why not and returns -1 when
     * there is none, or when the pid is a member of more than one. */
    int (*select)(const char *server, char *out, size_t cap);
    /* `run NAME` without --server: the claim directory of the caller's
     * one live server in the base (a live master that forked; no `run`
     * namespace), into OUT, its master's pid in *MASTER: 1; 0 when there
     * is none; -1 when there are several (said, each named with its
     * --server).  Another user's server is never chosen: root is told of
     * one that holds NAME now. */
    int (*only_server)(const char *name, char *out, size_t cap, long *master);
    /* Where `run` keeps its claims when no --server names a directory:
     * BASE and NAME of the user's own namespace, its directories made
     * first when CREATE: 0, or -1. */
    int (*run_namespace)(char *base, size_t base_cap, char *name, size_t name_cap, int create);
    /* Makes this process use the claim directory BASE/NAME, made when it
     * is not there (run's namespace, or a server's it joins): 0, or -1
     * with errno (EPERM: it is not this user's). */
    int (*join)(const char *base, const char *name);
    /* `run NAME` started by a process of a server: makes this process use
     * the claim directory its environment names (SWERVE_CLAIM_DIR, which
     * the shim gives every image a server's process starts), made at the
     * place its server reserved when no process of it needed one yet.  1
     * (its path in OUT), 0 when the environment names none, -1 with errno
     * (its path in OUT when it fits). */
    int (*join_environment)(char *out, size_t cap);
    /* ", held by process PID (COMMAND)" when somebody holds NAME in the
     * claim directory at PATH now, else "", into OUT. */
    void (*holder)(const char *path, const char *name, char *out, size_t cap);

    /* gc: clears the dead holders of DIRS and removes the directories
     * nobody uses any more, with the library's own race-free clearing
     * (said, each; when DRY, what it would do), counting in *REMOVED: 1
     * when something could not be (said), else 0. */
    int (*collect)(const struct scl_admin_dirs *dirs, int dry, size_t *removed);
    /* drain: tells the live members of DIRS (only PID, when not 0) that
     * they drain (said, each): 0 when one was told and none failed, else
     * -1 (said). */
    int (*tell_draining)(const struct scl_admin_dirs *dirs, long pid);
    /* release --force: removes the one claim named NAME among DIRS
     * (SERVER's, when not NULL, for a message), loudly when its holder is
     * alive, and tells its holder: 0, or -1 (said: none, several, or it
     * could not be). */
    int (*release_forced)(const struct scl_admin_dirs *dirs, const char *name, const char *server);
};

/* How a store's code for the tools tells a person what went wrong (a
 * directory it will not read): through the tool's own printer, which
 * escapes what it prints (names and paths may be anybody's).  The tool
 * sets it before its first operation; until then nothing is said. */
typedef void scl_admin_report_fn(const char *fmt, ...);
void scl_admin_set_report(scl_admin_report_fn *fn);
void scl_admin_report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same for what a tool says on its standard output (what gc removed,
 * whom drain told). */
void scl_admin_set_say(scl_admin_report_fn *fn);
void scl_admin_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Where the claim directories are: --base, else the library's default
 * (settings.h), and whether --base said so.  The tool sets it before its
 * first operation. */
void scl_admin_set_base(const char *base, int explicit);
const char *scl_admin_base(void);
int scl_admin_base_explicit(void);

/* Why directory ST may not lead the caller to what it works on: NULL
 * when only root and the caller can rename or replace what is in it (it
 * is theirs, and its group and others may not write it, but for the
 * sticky bit), else what is wrong, for a message. */
struct stat;
const char *scl_admin_untrusted_dir(const struct stat *st);

/* The store in use, as scl_store() chooses it (stores.h). */
const struct scl_store_admin *scl_store_admin(void);

/* A claim's NAME as a message shows it: its first SCL_ADMIN_NAME_SHOWN
 * characters and "…" when it is longer (a name may be 4 KB; the bindings
 * cut theirs the same way), in a buffer that the fourth call after
 * reuses.  Every message of the tools and of the stores' tool sides that
 * names a claim. */
#define SCL_ADMIN_NAME_SHOWN 64
const char *scl_admin_shown_name(const char *name);

#endif
