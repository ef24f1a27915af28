/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "history.h"
#include "names.h"
#include "sigsafe.h"
#include "times.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(sizeof(struct scl_history_record) == 128, "a record is two cache lines");
_Static_assert(offsetof(struct scl_history_file, index) == 64, "the header is a cache line");
_Static_assert((SCL_HISTORY_NAMES * SCL_HISTORY_RECORDS) <= 65536, "a record's index fits an int");

/* This process's history; GEN says for which directory.  The one before
 * (another thread may still be writing through it: it loaded it before
 * the change) is unmapped one change later, as times.c does. */
static struct {
    struct scl_history_file *_Atomic file;
    atomic_uint gen;
    struct scl_history_file *retired;
} mine;

/* This process's command line for its records, and whose it is: a forked
 * child has its parent's until it takes a new name itself. */
static struct {
    _Atomic pid_t pid;
    char text[SCL_HISTORY_COMMAND];
} command;

int scl_history_create(int top_fd)
{
    struct {
        uint32_t magic, names;
        int64_t realtime_offset;
    } head = { SCL_HISTORY_MAGIC, SCL_HISTORY_NAMES, scl_times_realtime_offset() };
    int fd, r = -1;

    _Static_assert(offsetof(struct scl_history_file, realtime_offset) == 8, "the head is written as it is read");
    fd = scl_openat(top_fd, SCL_HISTORY_FILE, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -1;
    if (scl_file_allocate(fd, (off_t)sizeof(struct scl_history_file)) == 0 &&
        pwrite(fd, &head, sizeof head, 0) == (ssize_t)sizeof head)
        r = 0;
    scl_close_quietly(fd);
    if (r != 0) {
        int saved = errno;
        (void)unlinkat(top_fd, SCL_HISTORY_FILE, 0); /* no history, rather than a SIGBUS */
        errno = saved;
    }
    return r;
}

/* 1 when ST is a history file this user made, whole: its own, nobody
 * else's to write (nor truncate under a mapping), one name (not a hard
 * link to another file put in its place), its size. */
static int own_history(const struct stat *st)
{
    return S_ISREG(st->st_mode) && st->st_uid == geteuid() && (st->st_mode & 077) == 0 && st->st_nlink == 1 &&
           st->st_size == (off_t)sizeof(struct scl_history_file);
}

struct scl_history_file *scl_history_open(int top_fd)
{
    struct scl_history_file *f = MAP_FAILED;
    struct stat st;
    int saved = errno, fd;

    fd = scl_open_file_at(top_fd, SCL_HISTORY_FILE, O_RDWR, &st);
    if (fd < 0) {
        errno = saved;
        return NULL;
    }
    if (own_history(&st)) /* the checks wake.c makes */
        f = mmap(NULL, sizeof *f, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    scl_close_quietly(fd);
    errno = saved;
    if (f == MAP_FAILED || f->magic != SCL_HISTORY_MAGIC || f->names != SCL_HISTORY_NAMES) {
        scl_history_unmap(f == MAP_FAILED ? NULL : f);
        return NULL;
    }
    return f;
}

void scl_history_unmap(struct scl_history_file *f)
{
    int saved = errno;

    if (f != NULL)
        (void)munmap(f, sizeof *f);
    errno = saved;
}

void scl_history_map(int top_fd, unsigned gen)
{
    struct scl_history_file *old = atomic_load(&mine.file);

    if (old != NULL && atomic_load(&mine.gen) == gen)
        return;
    /* Replaced even by none: never the last directory's. */
    atomic_store(&mine.file, scl_history_open(top_fd));
    atomic_store(&mine.gen, gen);
    if (old != NULL) {
        scl_history_unmap(mine.retired);
        mine.retired = old;
    }
}

struct scl_history_file *scl_history_mine(void)
{
    return atomic_load(&mine.file);
}

void scl_history_set_command(pid_t self, const char *text)
{
    size_t n = scl_length(text);

    if (n >= sizeof command.text)
        n = sizeof command.text - 1;
    memcpy(command.text, text, n);
    memset(command.text + n, 0, sizeof command.text - n);
    atomic_store(&command.pid, self);
}

/* NAME.history, the name of the history kept beside directory NAME, into
 * OUT: 0, or -1 when NAME is random (a server's) or too long for one. */
static int kept_name(const char *name, char out[NAME_MAX + 1])
{
    return scl_layout_is_random(name) ? -1 : scl_concat(out, NAME_MAX + 1, name, SCL_KEPT_HISTORY_SUFFIX, (char *)NULL);
}

int scl_history_keep(int basefd, const char *name, int top_fd)
{
    char kept[NAME_MAX + 1];
    struct stat st;

    /* A worker may have put anything in its name: only our own file
     * waits in the base; anything else goes. */
    if (fstatat(top_fd, SCL_HISTORY_FILE, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? 0 : -1;
    if (own_history(&st) && kept_name(name, kept) == 0 && renameat(top_fd, SCL_HISTORY_FILE, basefd, kept) == 0)
        return 0;
    return unlinkat(top_fd, SCL_HISTORY_FILE, 0) != 0 && errno != ENOENT ? -1 : 0;
}

void scl_history_take_back(int basefd, const char *name, int top_fd)
{
    char kept[NAME_MAX + 1];
    struct stat st;
    int saved = errno;

    if (kept_name(name, kept) == 0 && fstatat(basefd, kept, &st, AT_SYMLINK_NOFOLLOW) == 0 && own_history(&st))
        (void)renameat(basefd, kept, top_fd, SCL_HISTORY_FILE); /* over the new, empty one */
    errno = saved;
}

/* ------------------------------------------------------------ the slots */

static uint64_t load64(const void *p)
{
    return __atomic_load_n((const uint64_t *)p, __ATOMIC_ACQUIRE);
}

/* The slot of HASH in F, or -1; in *FREE (when not NULL) the first free
 * slot from its home on, or -1.  Every slot is looked at: a name given a
 * slot on a full table may be anywhere. */
static int find(const struct scl_history_file *f, uint64_t hash, int *free_slot)
{
    unsigned home = (unsigned)(hash % SCL_HISTORY_NAMES);

    if (free_slot != NULL)
        *free_slot = -1;
    for (unsigned i = 0; i < SCL_HISTORY_NAMES; i++) {
        unsigned at = (home + i) % SCL_HISTORY_NAMES;
        uint64_t h = load64(&f->index[at].hash);
        if (h == hash)
            return (int)at;
        if (h == 0 && free_slot != NULL && *free_slot < 0)
            *free_slot = (int)at;
    }
    return -1;
}

/* 1 when a hold recorded in slot S is open. */
static int has_open(const struct scl_history_file *f, unsigned s)
{
    uint64_t h = load64(&f->index[s].hash);

    for (unsigned r = 0; r < SCL_HISTORY_RECORDS; r++) {
        const struct scl_history_record *rec = &f->slots[s].records[r];
        if (load64(&rec->hash) == h && __atomic_load_n(&rec->how, __ATOMIC_ACQUIRE) == SCL_HOLD_HELD)
            return 1;
    }
    return 0;
}

/* The slot a full table gives up for a new name: the one whose name was
 * taken longest ago, none of whose holds is open; -1 when every slot has
 * one.  *WAS: its name's hash. */
static int idlest(const struct scl_history_file *f, uint64_t *was)
{
    int best = -1;
    int64_t oldest = 0;

    for (unsigned i = 0; i < SCL_HISTORY_NAMES; i++) {
        int64_t last = (int64_t)load64(&f->index[i].last);
        if ((best < 0 || last < oldest) && !has_open(f, i)) {
            best = (int)i;
            oldest = last;
        }
    }
    if (best >= 0)
        *was = load64(&f->index[best].hash);
    return best;
}

/* Makes slot S, just won, FNAME's (LEN bytes): its name written before
 * its length, which readers wait for. */
static void name_slot(struct scl_history_file *f, int s, const char *fname, size_t len)
{
    struct scl_history_name *n = &f->slots[s];

    __atomic_store_n(&n->len, 0, __ATOMIC_RELAXED);
    memcpy(n->fname, fname, len);
    n->fname[len] = '\0';
    __atomic_store_n(&n->len, (uint32_t)len, __ATOMIC_RELEASE);
    __atomic_store_n(&f->index[s].last, scl_monotonic_ns(), __ATOMIC_RELAXED);
}

/* The slot of FNAME (HASH) in F, given a free one, or the idlest, when
 * it has none: its index, or -1.  Others may add names at once: a lost
 * race looks again, a few times. */
static int slot_of(struct scl_history_file *f, const char *fname, uint64_t hash)
{
    size_t len = scl_length(fname);

    if (len == 0 || len >= SCL_FNAME_MAX)
        return -1;
    for (int attempt = 0; attempt < 4; attempt++) {
        int free_slot, s = find(f, hash, &free_slot);
        uint64_t was = 0;
        if (s >= 0)
            return s;
        if (free_slot < 0 && (free_slot = idlest(f, &was)) < 0)
            return -1;
        if (__atomic_compare_exchange_n(&f->index[free_slot].hash, &was, hash, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
            name_slot(f, free_slot, fname, len);
            return free_slot;
        }
    }
    return -1;
}

int scl_history_slot(const char *fname, uint64_t hash)
{
    struct scl_history_file *f = scl_history_mine();

    return f != NULL ? slot_of(f, fname, hash) : -1;
}

/* ---------------------------------------------------------- the records */

/* Writes a record of HASH by PID into slot S of F: blanked first, its
 * hash last, so that no reader takes half of one for a whole.  Its
 * index. */
static int put(struct scl_history_file *f, int s, uint64_t hash, pid_t pid, int64_t taken, const char *text,
               const struct scl_hold_end *end)
{
    unsigned i = __atomic_fetch_add(&f->slots[s].count, 1, __ATOMIC_RELAXED) % SCL_HISTORY_RECORDS;
    struct scl_history_record *r = &f->slots[s].records[i];

    __atomic_store_n(&r->hash, 0, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    r->taken = taken;
    r->pid = pid;
    r->how = end != NULL ? end->how : SCL_HOLD_HELD;
    r->detail = end != NULL ? end->detail : 0;
    r->ended = end != NULL ? scl_monotonic_ns() : 0;
    memcpy(r->command, text, sizeof r->command);
    r->command[sizeof r->command - 1] = '\0';
    __atomic_store_n(&r->hash, hash, __ATOMIC_RELEASE);
    __atomic_store_n(&f->index[s].last, taken > 0 ? taken : r->ended, __ATOMIC_RELAXED);
    return s * SCL_HISTORY_RECORDS + (int)i;
}

int scl_history_taken(int slot, const char *fname, uint64_t hash, pid_t self, int64_t at)
{
    static const char none[SCL_HISTORY_COMMAND];
    struct scl_history_file *f = scl_history_mine();

    if (f == NULL)
        return -1;
    /* Given to another name meanwhile (a full table): found again. */
    if (slot < 0 || slot >= SCL_HISTORY_NAMES || load64(&f->index[slot].hash) != hash)
        slot = slot_of(f, fname, hash);
    if (slot < 0)
        return -1;
    return put(f, slot, hash, self, at, atomic_load(&command.pid) == self ? command.text : none, NULL);
}

/* Ends record R as END says. */
static void end_record(struct scl_history_record *r, const struct scl_hold_end *end)
{
    r->detail = end->detail;
    r->ended = scl_monotonic_ns();
    __atomic_store_n(&r->how, end->how, __ATOMIC_RELEASE);
}

void scl_history_released(int record, uint64_t hash, pid_t pid, int64_t taken)
{
    static const struct scl_hold_end released = { NULL, SCL_HOLD_RELEASED, 0 };
    struct scl_history_file *f = scl_history_mine();
    struct scl_history_record *r;

    if (f == NULL || record < 0 || record >= SCL_HISTORY_NAMES * SCL_HISTORY_RECORDS)
        return;
    r = &f->slots[record / SCL_HISTORY_RECORDS].records[record % SCL_HISTORY_RECORDS];
    /* Still this hold's record, and open: a forced release ended it. */
    if (load64(&r->hash) == hash && r->pid == pid && r->taken == taken &&
        __atomic_load_n(&r->how, __ATOMIC_ACQUIRE) == SCL_HOLD_HELD)
        end_record(r, &released);
}

int scl_history_end(struct scl_history_file *f, const char *fname, pid_t pid, const struct scl_hold_end *end)
{
    uint64_t hash = scl_times_hash(fname);
    int s = f != NULL ? find(f, hash, NULL) : -1;

    if (s < 0)
        return f != NULL ? 0 : -1;
    for (unsigned i = 0; i < SCL_HISTORY_RECORDS; i++) {
        struct scl_history_record *r = &f->slots[s].records[i];
        if (load64(&r->hash) == hash && r->pid == pid && __atomic_load_n(&r->how, __ATOMIC_ACQUIRE) == SCL_HOLD_HELD) {
            end_record(r, end);
            return 1;
        }
    }
    return 0;
}

void scl_history_add(struct scl_history_file *f, const char *fname, pid_t pid, int64_t taken, const char *text,
                     const struct scl_hold_end *end)
{
    char copy[SCL_HISTORY_COMMAND];
    uint64_t hash = scl_times_hash(fname);
    size_t n = scl_length(text);
    int s;

    if (f == NULL || (s = slot_of(f, fname, hash)) < 0)
        return;
    if (n >= sizeof copy)
        n = sizeof copy - 1;
    memcpy(copy, text, n);
    memset(copy + n, 0, sizeof copy - n);
    (void)put(f, s, hash, pid, taken, copy, end);
}

/* ------------------------------------------------------------ the tools */

/* Reads the history NAME of PARENT_FD into F, only when it is this user's own
 * when OWN_ONLY. */
static int read_at(int parent_fd, const char *name, struct scl_history_file *f, int own_only)
{
    struct stat st;
    ssize_t n;
    int fd = scl_open_file_at(parent_fd, name, O_RDONLY, &st);

    if (fd < 0)
        return -1;
    if (own_only && !own_history(&st)) {
        scl_close_quietly(fd);
        errno = EPERM;
        return -1;
    }
    n = scl_read_full(fd, f, sizeof *f);
    scl_close_quietly(fd);
    return n < 0 ? -1 : scl_history_parse(f, (size_t)n);
}

int scl_history_read(int top_fd, struct scl_history_file *f)
{
    return read_at(top_fd, SCL_HISTORY_FILE, f, 0);
}

int scl_history_read_kept(int basefd, const char *name, struct scl_history_file *f)
{
    char kept[NAME_MAX + 1];

    if (kept_name(name, kept) != 0) {
        errno = ENOENT;
        return -1;
    }
    return read_at(basefd, kept, f, 1);
}

time_t scl_history_when(const struct scl_history_file *f, int64_t t)
{
    return scl_times_epoch(t, f->realtime_offset);
}

/* 1 when record R of a slot whose name hashes to HASH is sound. */
static int record_is_sound(const struct scl_history_file *f, const struct scl_history_record *r, uint64_t hash)
{
    if (hash == 0 || r->hash != hash || r->how >= SCL_HOLD_HOW_COUNT)
        return 0;
    /* Only an end recorded by a clearer may have no known start. */
    if (r->taken != 0 ? scl_history_when(f, r->taken) == 0 : r->how == SCL_HOLD_HELD)
        return 0;
    if (r->how == SCL_HOLD_HELD)
        return r->ended == 0;
    return scl_history_when(f, r->ended) != 0 && (r->taken == 0 || r->ended >= r->taken);
}

/* Keeps of slot S what is sound: its name, when it is an encoded claim
 * name of the slot's hash, and the records of that name. */
static void check_slot(struct scl_history_file *f, unsigned s)
{
    struct scl_history_name *n = &f->slots[s];
    uint64_t *hash = &f->index[s].hash;

    if (n->len >= SCL_FNAME_MAX)
        n->len = 0;
    n->fname[n->len] = '\0';
    if (*hash != 0 && (n->len == 0 || !scl_name_is_fname(n->fname, n->len) || scl_times_hash(n->fname) != *hash))
        *hash = 0;
    for (unsigned i = 0; i < SCL_HISTORY_RECORDS; i++) {
        struct scl_history_record *r = &n->records[i];
        if (!record_is_sound(f, r, *hash))
            memset(r, 0, sizeof *r);
        r->command[sizeof r->command - 1] = '\0';
    }
}

int scl_history_parse(struct scl_history_file *f, size_t n)
{
    if (n != sizeof *f || f->magic != SCL_HISTORY_MAGIC || f->names != SCL_HISTORY_NAMES) {
        errno = EINVAL;
        return -1;
    }
    for (unsigned s = 0; s < SCL_HISTORY_NAMES; s++)
        check_slot(f, s);
    return 0;
}
