/* SPDX-License-Identifier: MIT */
/* swerve-claim metrics: every claim and waiter as the Prometheus text
 * exposition format (0.0.4) that node_exporter's textfile collector reads,
 * from the store's samples (store_admin.h); replace.c writes it to a file. */
#include "config.h"

#include "store_admin.h"
#include "tool.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One sample of a family: its labels, as written, and its value. */
struct line {
    char *labels;
    const char *value; /* "NaN", or NULL: NUMBER */
    long long number;
};

/* A family being made; a COUNTED one's value for a set of labels is the
 * sum of its lines' (swerve_claim_waiters: a claim 0, a waiter 1). */
struct family {
    struct line *lines;
    size_t n, cap;
    int counted;
};

/* What the store gave, as families. */
struct collected {
    struct family held, stale, waiters, waiting;
    time_t now;
    int failed;  /* out of memory */
    long unread; /* claim directories not read (said), or -1: a store of sessions */
};

/* The length of the UTF-8 character at P (1 to 4), or 0 when no valid
 * one starts there (an overlong form, a surrogate, past U+10FFFF, cut
 * short). */
static size_t utf8_length(const unsigned char *p)
{
    unsigned lo = 0x80, hi = 0xbf;
    size_t n;

    if (p[0] < 0x80)
        return 1;
    if (p[0] >= 0xc2 && p[0] <= 0xdf)
        n = 2;
    else if (p[0] >= 0xe0 && p[0] <= 0xef)
        n = 3, lo = p[0] == 0xe0 ? 0xa0 : 0x80, hi = p[0] == 0xed ? 0x9f : 0xbf;
    else if (p[0] >= 0xf0 && p[0] <= 0xf4)
        n = 4, lo = p[0] == 0xf0 ? 0x90 : 0x80, hi = p[0] == 0xf4 ? 0x8f : 0xbf;
    else
        return 0;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++) /* a NUL is no continuation: nothing is read past it */
        if (p[i] < 0x80 || p[i] > 0xbf)
            return 0;
    return n;
}

/* Writes S as a label value: '\', '"' and a newline as the format escapes
 * them; a byte that is no part of UTF-8 (the format's values are UTF-8),
 * and a control character (nothing reaches a terminal raw), as the four
 * characters \xHH, escaped "\\xHH". */
static void put_label(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0';) {
        size_t n = utf8_length(p);
        int control = (n == 1 && (*p < 0x20 || *p == 0x7f) && *p != '\n') || (n == 2 && p[0] == 0xc2 && p[1] < 0xa0);
        if (n == 0 || control) {
            for (size_t i = 0; i < (n > 0 ? n : 1); i++)
                fprintf(f, "\\\\x%02x", p[i]);
            p += n > 0 ? n : 1;
        } else if (n == 1 && (*p == '\\' || *p == '"' || *p == '\n')) {
            fputs(*p == '\\' ? "\\\\" : *p == '"' ? "\\\"" : "\\n", f);
            p++;
        } else {
            fwrite(p, 1, n, f);
            p += n;
        }
    }
}

/* Writes the label NAME="VALUE", after a comma unless it is the FIRST. */
static void put_pair(FILE *f, int first, const char *name, const char *value)
{
    fprintf(f, "%s%s=\"", first ? "" : ",", name);
    put_label(f, value);
    fputc('"', f);
}

/* S's labels: name and server, and, unless BRIEF, the holder's or
 * waiter's (host, for a store of sessions; pid, user and, unless
 * WAITING, state).  A malloc'ed string, or NULL. */
static char *labels_of(const struct scl_admin_sample *s, int brief, int waiting)
{
    char *text = NULL, pid[24] = "";
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    if (f == NULL)
        return NULL;
    fputc('{', f);
    put_pair(f, 1, "name", s->name);
    put_pair(f, 0, "server", s->server);
    if (s->server_pid > 0) {
        char master[24];
        snprintf(master, sizeof master, "%ld", s->server_pid);
        put_pair(f, 0, "server_pid", master);
    }
    if (!brief) {
        if (s->host != NULL)
            put_pair(f, 0, "host", s->host);
        if (s->pid > 0)
            snprintf(pid, sizeof pid, "%ld", s->pid);
        put_pair(f, 0, "pid", pid);
        put_pair(f, 0, "user", s->user);
        if (!waiting)
            put_pair(f, 0, "state", s->state);
    }
    fputc('}', f);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* Adds a line of LABELS (taken) to F: 0, or -1 (out of memory). */
static int add_line(struct family *f, char *labels, const char *value, long long number)
{
    if (labels == NULL)
        return -1;
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 64;
        struct line *more = realloc(f->lines, cap * sizeof *more);
        if (more == NULL) {
            free(labels);
            return -1;
        }
        f->lines = more;
        f->cap = cap;
    }
    f->lines[f->n++] = (struct line){ labels, value, number };
    return 0;
}

/* Seconds since SINCE, with *VALUE NULL; or 0 with *VALUE "NaN": not
 * known. */
static long long age(const struct collected *c, time_t since, const char **value)
{
    *value = since > 0 ? NULL : "NaN";
    return since > 0 && c->now > since ? (long long)(c->now - since) : 0;
}

static void collect(const struct scl_admin_sample *s, void *arg)
{
    struct collected *c = arg;
    const char *value;
    long long seconds = age(c, s->since, &value);
    int r;

    if (s->held)
        r = add_line(&c->held, labels_of(s, 0, 0), value, seconds) |
            add_line(&c->stale, labels_of(s, 0, 0), NULL, s->stale != 0);
    else
        r = add_line(&c->waiting, labels_of(s, 0, 1), value, seconds);
    /* Every claim has a count, 0 too; each waiter adds one to its
     * claim's (or makes one, for a name nobody holds). */
    r |= add_line(&c->waiters, labels_of(s, 1, 0), NULL, !s->held);
    c->failed |= r != 0;
}

static int by_labels(const void *a, const void *b)
{
    return strcmp(((const struct line *)a)->labels, ((const struct line *)b)->labels);
}

/* Prints family F, NAME (a gauge) with HELP: one line for each set of
 * labels, in their order.  Two lines with the same (names that are alike
 * once escaped, or that a worker made alike: the format has one sample
 * per set of labels, and a second is an error to whoever reads it, the
 * collector's gatherer and Prometheus) are one: a counted family's sum,
 * else the first.  How many lines were left out. */
static size_t print_family(FILE *out, const char *name, const char *help, struct family *f)
{
    size_t left_out = 0;

    fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
    if (f->n > 1)
        qsort(f->lines, f->n, sizeof *f->lines, by_labels);
    for (size_t i = 0, j; i < f->n; i = j) {
        long long sum = f->lines[i].number;
        for (j = i + 1; j < f->n && strcmp(f->lines[j].labels, f->lines[i].labels) == 0; j++)
            sum += f->lines[j].number;
        if (!f->counted)
            left_out += j - i - 1;
        fprintf(out, "%s%s ", name, f->lines[i].labels);
        if (f->lines[i].value != NULL)
            fprintf(out, "%s\n", f->lines[i].value);
        else
            fprintf(out, "%lld\n", f->counted ? sum : f->lines[i].number);
    }
    return left_out;
}

static void free_family(struct family *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->lines[i].labels);
    free(f->lines);
}

/* The text of C's families, malloc'ed into *TEXT and *LEN: how many lines
 * were left out, or -1 (out of memory). */
static long format(struct collected *c, char **text, size_t *len)
{
    FILE *out = open_memstream(text, len);
    size_t left_out;

    if (out == NULL)
        return -1;
    left_out =
        print_family(out, "swerve_claim_held_seconds", "How long each claim has been held (NaN: not known).", &c->held);
    left_out += print_family(out, "swerve_claim_stale",
                             "1 when a claim's holder is gone, stopped, has had its pid reused or is no member: "
                             "nobody will release it (swerve-claim gc, or its next taker, clears it).",
                             &c->stale);
    left_out += print_family(out, "swerve_claim_waiters", "How many processes wait for each claim.", &c->waiters);
    left_out += print_family(out, "swerve_claim_waiting_seconds", "How long each waiter has waited (NaN: not known).",
                             &c->waiting);
    if (c->unread >= 0)
        fprintf(out,
                "# HELP swerve_claim_directories_unread Claim directories not read (too big, or past what one "
                "reading may take in all): what is above is incomplete when it is not 0.\n"
                "# TYPE swerve_claim_directories_unread gauge\nswerve_claim_directories_unread %ld\n",
                c->unread);
    if (fclose(out) != 0) {
        free(*text);
        return -1;
    }
    return (long)left_out;
}

/* What metrics' options say. */
struct metrics_options {
    const char *server, *output;
};

/* Reads metrics' options into *O: 0, or the usage status (said). */
static int parse_options(int argc, char **argv, struct metrics_options *o)
{
    static const struct option opts[] = {
        { "server", required_argument, NULL, 's' },
        { "output", required_argument, NULL, 'o' },
        TOOL_BASE_OPTION,
        { NULL, 0, NULL, 0 },
    };
    int c;

    while ((c = tool_getopt(argc, argv, "s:o:", opts)) != -1) {
        switch (c) {
        case 's': o->server = optarg; break;
        case 'o': o->output = optarg; break;
        default: return TOOL_USAGE;
        }
    }
    if (optind != argc)
        return tool_usage_error("metrics takes no arguments");
    return tool_check_store_options(o->server, NULL);
}

/* The store's samples into C: 0; 1 when a directory was not read (said);
 * -1 when the store failed (said). */
static int sample(const struct metrics_options *o, struct collected *c)
{
    const struct scl_store_admin *store = scl_store_admin();
    struct scl_admin_select sel = { .older_than = -1 };
    struct scl_admin_dirs *dirs = NULL;
    int loaded = 0, r;

    if ((store->can & SCL_ADMIN_DIRECTORIES) && (loaded = store->directories->load(o->server, 0, &dirs)) < 0)
        return -1;
    sel.dirs = dirs;
    c->unread = (store->can & SCL_ADMIN_DIRECTORIES) ? loaded : -1;
    c->now = time(NULL);
    r = store->listing->samples(&sel, collect, c);
    if (r != 0)
        tool_store_unread();
    if (store->can & SCL_ADMIN_DIRECTORIES)
        store->directories->free(dirs);
    return r != 0 ? -1 : loaded;
}

/* TEXT (LEN bytes) into OUTPUT, replaced whole, or to standard output:
 * 0, or -1 (said). */
static int emit(const char *output, const char *text, size_t len)
{
    if (output != NULL)
        return tool_replace_file(output, text, len);
    if (fwrite(text, 1, len, stdout) == len && fflush(stdout) == 0)
        return 0;
    tool_error("standard output: %s", strerror(errno));
    return -1;
}

int tool_metrics(int argc, char **argv)
{
    struct metrics_options o = { 0 };
    struct collected c = { .waiters.counted = 1 };
    char *text = NULL;
    size_t len = 0;
    long left_out = -1;
    int r, loaded;

    if (parse_options(argc, argv, &o) != 0)
        return TOOL_USAGE;
    /* Nothing is written when the store could not be read: a file left
     * as it was ages, and its age is what monitoring watches. */
    loaded = sample(&o, &c);
    if (loaded >= 0 && (c.failed || (left_out = format(&c, &text, &len)) < 0))
        tool_error("out of memory");
    if (left_out > 0)
        tool_error("note: %ld samples left out: their labels were another's (names alike once escaped)", left_out);
    /* A directory not read (said) fails too, once the others are written. */
    r = left_out >= 0 && emit(o.output, text, len) == 0 && loaded == 0 ? TOOL_OK : TOOL_FAILURE;
    free(text);
    free_family(&c.held);
    free_family(&c.stale);
    free_family(&c.waiters);
    free_family(&c.waiting);
    return r;
}
