/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: what a root process reads from files a worker can
 * write, and from a /proc a worker names its command in: the holder
 * header, a page of times and the drain note in it (src/fs/times.c), a
 * directory's history (src/fs/history.c), a /proc/PID/stat line, a
 * /proc/PID/status text and a /proc/PID/environ block (src/core/proc.c),
 * and the journal, fed to the reader in pieces whose sizes come from the
 * input.  Whatever the bytes,
 * every name the reader reports is a single encoded claim name, and how
 * the journal is cut into reads, or whether it keeps what follows a
 * name's tab, never changes which names it reports.  Run by
 * tests/fuzz/fuzz.sh.
 */
#include "config.h"

#include "history.h"
#include "holder.h"
#include "proc.h"
#include "times.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void must(int cond)
{
    if (!cond)
        abort();
}

struct seen {
    char names[64][SCL_FNAME_MAX];
    size_t n, total;
};

/* The tools' reader keeps what follows a name's tab; the library's does
 * not: the pieces are read with a room for it, the whole without. */
static char tails[97];

static int note(const char *fname, const char *tail, void *arg)
{
    struct seen *s = arg;
    size_t len = strlen(fname);

    must(strchr(tail, '\n') == NULL && strlen(tail) < sizeof tails);
    must(scl_name_is_fname(fname, len));
    must(strchr(fname, '/') == NULL && fname[0] != '.');
    if (s->n < 64)
        memcpy(s->names[s->n++], fname, len + 1);
    s->total++;
    return 0;
}

/* The bytes as a page of times, read whole or short: what the tools show
 * of it is bounded, no time precedes 1970, and it drains only by a drain
 * note's word. */
static void check_times(const uint8_t *data, size_t n)
{
    static struct scl_times_page page;
    size_t len = n < sizeof page ? n : sizeof page;

    memset(&page, 0, sizeof page);
    memcpy(&page, data, len);
    if (n > 0 && data[0] == 0xff) { /* now and then a whole page, zero-padded, that passes the magic */
        page.magic = SCL_TIMES_MAGIC;
        len = sizeof page;
        if (n > sizeof page.drain) /* and a drain note of the input's last bytes */
            memcpy(&page.drain, data + n - sizeof page.drain, sizeof page.drain);
    }
    if (scl_times_parse(&page, len) != 0)
        return;
    must(page.used <= SCL_TIMES_SLOTS);
    must(scl_times_when(&page, &page.waiting) >= 0);
    for (uint32_t i = 0; i < page.used; i++)
        must(scl_times_when(&page, &page.taken[i]) >= 0);
    must(scl_times_of(&page, "name") >= 0);
    must(!scl_times_draining(&page) || page.drain.magic == SCL_DRAIN_MAGIC);
}

/* The bytes as the slot of a directory's history that the first byte
 * chooses (the rest of the file zeroes, its head a history's).  Now and
 * then (the next bytes say) the slot's hash, and its records', are made
 * its name's, and the time offset is the input's, so that the checks of
 * records are reached.  Whatever parse keeps is what the tools may show:
 * a name a claim's of its slot's hash, records of that name with times
 * after 1970 and commands that end. */
static void check_history(const uint8_t *data, size_t n)
{
    static struct scl_history_file f;
    size_t slot = n > 0 ? data[0] % SCL_HISTORY_NAMES : 0;
    struct scl_history_name *name = &f.slots[slot];

    memset(&f, 0, sizeof f);
    f.magic = SCL_HISTORY_MAGIC;
    f.names = SCL_HISTORY_NAMES;
    f.realtime_offset = 1700000000LL * 1000000000LL;
    memcpy(name, data, n < sizeof *name ? n : sizeof *name);
    if (n > 4 && data[1] == 0xff && name->len < sizeof name->fname) {
        name->fname[name->len] = '\0';
        f.index[slot].hash = scl_times_hash(name->fname);
        for (size_t i = 0; i < SCL_HISTORY_RECORDS && data[2] == 0xff; i++)
            name->records[i].hash = f.index[slot].hash;
        if (data[3] == 0xff)
            memcpy(&f.realtime_offset, data + n - 8 > data + 4 ? data + n - 8 : data + 4, n >= 12 ? 8 : 0);
    }
    must(scl_history_parse(&f, sizeof f) == 0); /* a sound head is taken */
    for (size_t s = 0; s < SCL_HISTORY_NAMES; s++) {
        const struct scl_history_name *m = &f.slots[s];
        must(strlen(m->fname) < sizeof m->fname);
        if (f.index[s].hash == 0)
            continue;
        must(scl_name_is_fname(m->fname, strlen(m->fname)) && scl_times_hash(m->fname) == f.index[s].hash);
        for (size_t i = 0; i < SCL_HISTORY_RECORDS; i++) {
            const struct scl_history_record *r = &m->records[i];
            must(memchr(r->command, '\0', sizeof r->command) != NULL);
            if (r->hash == 0)
                continue;
            must(r->hash == f.index[s].hash && r->how < SCL_HOLD_HOW_COUNT);
            must(r->taken == 0 || scl_history_when(&f, r->taken) > 0);
            must(r->how == SCL_HOLD_HELD ? r->ended == 0 && r->taken > 0 : scl_history_when(&f, r->ended) > 0);
        }
    }
    must(scl_history_parse(&f, sizeof f - 1) != 0);
}

/* The bytes as a /proc/PID/stat line, whose command name is anybody's,
 * and as a /proc/PID/status text. */
static void check_stat(const uint8_t *data, size_t n)
{
    static char line[512];
    struct scl_proc_stat st;
    uid_t uids[4];
    size_t len = n < sizeof line - 1 ? n : sizeof line - 1;

    memcpy(line, data, len);
    line[len] = '\0';
    if (scl_proc_parse_stat(line, &st) == 0)
        must(st.state != '\0');
    /* As a /proc/PID/status text: the sanitizers judge these. */
    (void)scl_proc_parse_tracer(line);
    (void)scl_proc_parse_uids(line, uids);
    /* As a /proc/PID/environ block, which is anybody's: a value found
     * lies inside it and ends inside it. */
    {
        const char *v = scl_env_block_value(line, len, "SWERVE_TMPDIR");
        must(v == NULL || (v > line && v < line + len && memchr(v, '\0', (size_t)(line + len - v)) != NULL));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct seen whole, pieces;
    struct scl_journal_reader r;
    struct scl_proc_id id;
    size_t at = 0, cut = 0;

    if (size < 1)
        return 0;
    if (scl_holder_parse_id((const char *)data + 1, size - 1, &id) == 0)
        must(id.pid > 0);
    check_times(data + 1, size - 1);
    check_history(data + 1, size - 1);
    check_stat(data + 1, size - 1);
    /* The first byte sets the piece sizes; the rest is the journal. */
    whole.n = whole.total = pieces.n = pieces.total = 0;
    scl_journal_begin(&r, NULL, 0);
    (void)scl_journal_feed(&r, (const char *)data + 1, size - 1, note, &whole);
    scl_journal_begin(&r, tails, sizeof tails);
    while (at < size - 1) {
        size_t piece = 1 + (size_t)((data[0] + cut++ * 7) % 13);
        if (piece > size - 1 - at)
            piece = size - 1 - at;
        (void)scl_journal_feed(&r, (const char *)data + 1 + at, piece, note, &pieces);
        at += piece;
    }
    must(whole.total == pieces.total && whole.n == pieces.n);
    for (size_t i = 0; i < whole.n; i++)
        must(strcmp(whole.names[i], pieces.names[i]) == 0);
    return 0;
}
