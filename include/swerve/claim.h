/* SPDX-License-Identifier: MIT */
/*
 * swerve/claim.h - named cross-process claims for prefork servers.
 *
 * A claim is a name that one process at a time can hold across a whole
 * server (a master and every process it forks).  It is meant for a job
 * that must run once, not once per worker: a nightly report, a cache
 * warm-up, a cron-style task.
 *
 * These functions live in libswerveclaim_preload.so, which is loaded into
 * an unmodified server with
 *
 *     LD_PRELOAD=libswerveclaim_preload.so ./existing-server
 *
 * An application that must also run without the shim resolves them at run
 * time with dlsym(RTLD_DEFAULT, ...); <swerve/claim-loader.h> does that.
 *
 * HOW IT WORKS
 *     A claim is a hard link, in a private directory below $SWERVE_TMPDIR
 *     (default $TMPDIR, then /tmp), to a file that holds the holder's pid.
 *     Linking is atomic and fails while the name is held, so the first
 *     process to try when the name is free gets it; there is no queue.  A
 *     claim is held until it is released, its handle is freed, or the
 *     process that holds it exits, execs or dies.  The directory is made
 *     before the first fork, so every worker shares it; a process that never
 *     forks gets a directory of its own, in which two handles still conflict.
 *
 * ACROSS MACHINES
 *     With SWERVE_CLAIM_STORE set, a claim is a PostgreSQL session advisory
 *     lock instead, held by the process's own database session: one name,
 *     one holder across every machine that names the same database and
 *     scope.  The functions behave as below; waiting happens in the
 *     server's queue; a claim also ends when the server ends the session
 *     (restart, failover, a lost network), which swerve_claim_held() tells.
 *     libpq is loaded on the first claim, never linked.  doc/cluster.md.
 *
 * THREADS
 *     Distinct handles may be used from different threads at once.  One
 *     handle must not be used from two threads at the same time.  A child
 *     that shares its parent's memory (vfork, clone with CLONE_VM but not
 *     CLONE_THREAD) must not call these functions: it would act as its
 *     parent.  A child of fork, or of clone without CLONE_VM, is itself.
 *
 * ENVIRONMENT
 *     SWERVE_TMPDIR   base directory for claim directories.
 *     TMPDIR          used when SWERVE_TMPDIR is unset.
 *     SWERVE_DEBUG    when set to 1, the library logs to standard error.
 *     SWERVE_CLAIM_STORE  a libpq connection URI or conninfo: the claims
 *                     are PostgreSQL's (ACROSS MACHINES).
 *     SWERVE_CLAIM_SCOPE  the namespace in that database ("default").
 *     SWERVE_CLAIM_MAX_NAMES  how many names one process may hold at once
 *                     in that database (1000); past it, ENOLCK.
 *     SWERVE_CLAIM_POOLER  "session": a pooler in front of it pools
 *                     sessions (PgBouncer's pool_mode = session).
 *     PGHOST, PGPASSFILE and libpq's other variables, for that database.
 *     SWERVE_CLAIM_DRAIN_SIGNALS  the signals by which a master tells a
 *                     worker to drain (swerve_claim_draining()).
 *     They are read once, when the library is loaded, and not at all by
 *     a setuid program; libswerveclaim_preload(8) says more.
 */
#ifndef SWERVE_CLAIM_H
#define SWERVE_CLAIM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The longest name, in bytes, not counting the terminating NUL. */
#define SWERVE_CLAIM_NAME_MAX 4096

/* An opaque handle on a name.  It claims nothing until acquired. */
struct swerve_claim;

/*
 * swerve_claim_new - a handle on NAME.
 *
 * NAME is any non-empty NUL-terminated string of up to
 * SWERVE_CLAIM_NAME_MAX bytes: '/', "..", '%', spaces, newlines and UTF-8
 * are all fine, and distinct names never conflict.  The handle keeps its own
 * copy.  Nothing is claimed and nothing is touched on disk.
 *
 * Returns the handle, to be freed with swerve_claim_free(), or NULL with
 * errno set to EINVAL (NAME is NULL or empty), ENAMETOOLONG (NAME is longer
 * than SWERVE_CLAIM_NAME_MAX bytes) or ENOMEM.
 */
struct swerve_claim *swerve_claim_new(const char *name);

/*
 * swerve_claim_name - the name CLAIM was made with (the handle's own copy,
 * valid until the handle is freed).
 */
const char *swerve_claim_name(const struct swerve_claim *claim);

/*
 * swerve_claim_available - whether nobody holds the name now.
 *
 * Returns 1 when nobody holds it (a holder that has died counts as nobody),
 * 0 when somebody does (this handle included), or -1 with errno set on a
 * system error.  Claims nothing; the answer may be stale as soon as it is
 * returned.
 *
 * A handle remembers the claim it last found a live holder's, for 20 ms
 * (the retry period): while the name is still that claim, this call and a
 * failing swerve_claim_acquire(claim, 0) cost one system call.  A holder
 * that died is nobody as soon as its claims are cleared (its reaper does
 * that under the shim); one that nobody cleared (a zombie, an orphan) is
 * nobody at most 20 ms after the handle last found it alive.
 */
int swerve_claim_available(const struct swerve_claim *claim);

/*
 * swerve_claim_acquire - take the name.
 *
 * TIMEOUT 0 tries once.  TIMEOUT > 0 tries again, at least every 20 ms and
 * as soon as the holder lets go, until the name is taken or TIMEOUT seconds
 * have passed; INFINITY waits for ever.  A signal does not end the wait.
 * Two handles on one name conflict, also in one process and one thread.
 *
 * Returns CLAIM when this handle holds the name (at once if it already
 * did, and still does: a claim whose database session ended is taken
 * anew).  Returns NULL otherwise, with errno set to EWOULDBLOCK (another
 * holds it and TIMEOUT is 0), ETIMEDOUT (TIMEOUT passed), EINVAL (TIMEOUT is
 * negative or NaN) or the error of the system call that failed (for example
 * ENOSPC or EACCES when the claim directory cannot be written).  With
 * SWERVE_CLAIM_STORE also ELIBACC (no libpq.so.5), ECONNREFUSED (no
 * server), EKEYREJECTED (authentication failed), EUSERS (too many
 * clients), EROFS (a standby), EPROTO (a pooler in transaction mode in
 * between), ENOLCK (SWERVE_CLAIM_MAX_NAMES names held already), ENOENT
 * (no schema: swerve-claim db init), EACCES (no grants), ECONNRESET (the
 * session ended) or EIO; ETIMEDOUT also when the server waited past
 * TIMEOUT for something else (a synchronous standby); TIMEOUT 0 gives the
 * database's round trips 2 s.
 */
struct swerve_claim *swerve_claim_acquire(struct swerve_claim *claim, double timeout);

/*
 * swerve_claim_wait_fd - a descriptor to wait on, in an event loop, for the
 * name to come free: how a coroutine waits for a claim without blocking
 * its thread, and so every other coroutine of it.
 *
 *     while (swerve_claim_acquire(claim, 0) == NULL) {
 *         if (errno != EWOULDBLOCK)
 *             fail();
 *         int fd = swerve_claim_wait_fd(claim);
 *         if (fd < 0)
 *             fail();
 *         suspend until FD is readable, or give up at the caller's deadline
 *     }
 *
 * Called after swerve_claim_acquire(claim, 0) failed with EWOULDBLOCK, it
 * returns a descriptor that becomes readable once the name may have come
 * free since that try: its holder released it (in any process), or ended
 * (exited, or was killed: also before anybody reaps it), or an operator
 * released it by force.  It is readable at once when the name is free
 * already.  Readable means "try again": another may take the name first,
 * and the try then fails with EWOULDBLOCK; call this function again and
 * wait again.  Nothing else makes it readable: no timer, no polling; the
 * timeout is the caller's (its event loop's timer).
 *
 * The descriptor is the library's: wait for it to become readable (poll,
 * select, epoll, an event loop's reader), never read, write or close it.
 * An event loop stops watching it before each swerve_claim_acquire(),
 * swerve_claim_release() and swerve_claim_free() of the handle, and
 * watches the number the next swerve_claim_wait_fd() returns: usually the
 * same, but a failed try may have closed it and the next wait opened
 * another (a lost database connection, a claim directory made anew).  It
 * is closed by the acquire that takes the name, by swerve_claim_release()
 * (which a waiter that gives up calls: it holds nothing, and stops
 * waiting) and by swerve_claim_free().  It is close-on-exec; the child of a fork makes one
 * of its own, leaving its parent's alone.  While it waits, a handle has
 * up to three descriptors open (this one, the name's FIFO behind it, and
 * a pidfd of a holder in another process); with SWERVE_CLAIM_STORE, one:
 * a database connection of its own, which waits in the server's queue.
 *
 * Returns the descriptor, or -1 with errno set to EALREADY (the handle
 * holds the name: nothing to wait for), EMFILE or ENFILE (no descriptor
 * left), ENOMEM, ENOSYS (a kernel older than Linux 5.3, without
 * pidfd_open), EEXIST or EBUSY (what stands at the name's FIFO in the
 * claim directory is no FIFO, or stays locked: swerve_claim(3)) or what
 * swerve_claim_acquire() says of the claim directory or the database.  Since version SWERVECLAIM_1.3.
 */
int swerve_claim_wait_fd(struct swerve_claim *claim);

/*
 * swerve_claim_held - whether this handle holds the name in this process.
 *
 * Returns 1 when it was acquired and not released since, else 0.  In a
 * child made by fork(), a handle inherited from the parent holds nothing
 * (the parent still does).  With SWERVE_CLAIM_STORE, 0 also once the
 * server has ended the session that held it: learnt from the socket, with
 * no round trip, so it can be called as often as a job likes.
 */
int swerve_claim_held(const struct swerve_claim *claim);

/*
 * swerve_claim_token - a fencing token for this hold of the name.
 *
 * Returns a number, never 0, greater than the token of every earlier hold
 * of the same name in the same namespace (the server's claim directory),
 * and the same for as long as this hold lasts; 0 when the handle holds
 * nothing (in a forked child too).  The PostgreSQL store takes it from
 * the database on the first call of a hold, so that an acquire never
 * writes: there it can also be 0 with errno ETIMEDOUT (not durable within
 * 10 s: a synchronous standby is away), ECONNRESET (the session, and with
 * it the hold, is gone), EPROTO (a pooler in between), ENOENT (a schema
 * older than the library: swerve-claim db init), EACCES (no grants), EROFS
 * (a read-only session), ENOLCK (the server's lock table is full), ENOMEM
 * or EIO.  Pass it along with what the holder
 * writes to a system outside: that system keeps the largest token it has
 * seen and refuses writes that carry a smaller one, so a holder that lost
 * the name without knowing it (stopped, then released by force) cannot
 * undo its successor's work.  Since version SWERVECLAIM_1.1.
 */
uint64_t swerve_claim_token(const struct swerve_claim *claim);

/*
 * swerve_claim_draining - whether this process is being drained: its
 * server is stopping it gracefully, in a reload or a stop.
 *
 * Draining releases nothing: a holder that should let go during a reload
 * (a long report, a leader's loop) asks this now and then and calls
 * swerve_claim_release() itself, so that the reload does not wait for it
 * and a worker of the new generation takes the name.
 *
 * Returns 1 once any of these has happened, and from then on:
 *   - its master (the process that forked it, or started it with vfork(),
 *     clone() or posix_spawn(); a child that execs is told through its
 *     page of times, so once it has claimed something) sent it a drain signal
 *     with kill(), killpg(), sigqueue() or tgkill(): one of
 *     SWERVE_CLAIM_DRAIN_SIGNALS, by default SIGHUP, SIGINT, SIGQUIT and
 *     SIGTERM (php-fpm's QUIT, gunicorn's TERM, uWSGI's HUP; a probe with
 *     signal 0 is none).  A child of a process that forked it after an
 *     exec is never taken for it; one that takes the pid of a child
 *     reaped unseen (SIGCHLD ignored) is not, once its master's fork()
 *     has returned;
 *   - it closed every listening socket it inherited from its master, with
 *     close(), close_range(), closefrom(), dup2() or dup3() over it, or
 *     shutdown() (nginx, Apache and php-fpm close them to drain a worker);
 *     a copy of one (php-fpm's children copy theirs) counts as one, so
 *     does one its master bound and it listens on itself (hypercorn's),
 *     and a socket of its own does not.  The closing of a listener at
 *     descriptor 1024 or above is not seen (one open there keeps this
 *     reason from saying 1), nor are the listeners of a process forked by
 *     _Fork() or a raw clone(); a vfork() child changes nothing of its
 *     parent's;
 *   - its master has ended: the process that forked it, vforked it or
 *     spawned it is no longer its parent (for a program exec'd by a
 *     process of a server, the process it started under).  Detaching is
 *     not draining: a session leader (a process that called setsid() or
 *     daemon(3), one started by setsid(1) or start-stop-daemon) is a
 *     master, as is the one child left by a process that called setsid()
 *     itself and exited (a daemon's double fork), and a program exec'd by
 *     a process of no
 *     server (a shell's, a supervisor's; with the PostgreSQL store, every
 *     program exec'd); a master killed by a signal, or one that exits
 *     leaving several workers, leaves them draining;
 *   - an operator ran swerve-claim drain on it (the filesystem store, and a
 *     process that has taken a claim: the word is written in its page of
 *     times);
 * 0 otherwise; -1 with errno ENOMEM only when its master could not map
 * the page it marks its children in, and nothing else says it drains.
 * swerve-claim list shows it "draining" (a holder its master signalled or
 * an operator told at once; for the other reasons once it has asked).
 * It costs a few system calls (getpid, getppid) and no more: ask it as
 * often as a job likes.  Since version SWERVECLAIM_1.2.
 */
int swerve_claim_draining(void);

/*
 * swerve_claim_release - give the name up; the handle lives on.
 *
 * Returns 0, doing nothing when the handle holds nothing (an inherited
 * handle in a forked child included), or -1 with errno set on a system
 * error, in which case the handle still holds the name.  Either way it
 * ends a wait: the descriptor swerve_claim_wait_fd() gave is closed.
 */
int swerve_claim_release(struct swerve_claim *claim);

/*
 * swerve_claim_why - why the last call of this thread failed, in words:
 * what errno says, with the path or the operation it concerns.
 *
 *     if (swerve_claim_acquire(claim, 0) == NULL && errno != EWOULDBLOCK)
 *         fprintf(stderr, "%s\n", swerve_claim_why() ?: strerror(errno));
 *
 * Returns a sentence such as "cannot open /nonexistent for claim
 * directories: No such file or directory (ENOENT)", or, with
 * SWERVE_CLAIM_STORE, "PostgreSQL store: " and what the server or libpq
 * said; or NULL when that call said nothing more than errno (a name
 * another holds, EWOULDBLOCK, has no more to say).  Each thread has its own.  Every
 * function above but swerve_claim_name() and swerve_claim_held() sets it
 * to NULL as it starts, so an old sentence never explains a new failure;
 * swerve_claim_free() leaves it alone, as it leaves errno.  Read it right
 * after the call that failed, as errno; it is meaningful only then.  The
 * string is the library's, valid in this thread until its next call of
 * these functions; at most 511 bytes.  Never fails, allocates nothing.
 * SWERVE_DEBUG=1 logs the same sentence.  Since version SWERVECLAIM_1.4.
 */
const char *swerve_claim_why(void);

/*
 * swerve_claim_free - release CLAIM if it holds the name, then free it.
 * NULL is accepted and ignored.  errno is left as it was.
 */
void swerve_claim_free(struct swerve_claim *claim);

#ifdef __cplusplus
}
#endif

#endif /* SWERVE_CLAIM_H */
