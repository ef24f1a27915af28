/* SPDX-License-Identifier: MIT */
/* A store's rows in a table, in the columns a command shows (rows.h). */
#include "config.h"

#include "rows.h"
#include "tool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* The table being filled: the store's rows go in under their parents. */
struct rows {
    const struct scl_admin_listing *listing;
    const struct rows_style *style;
    struct table_column cols[SCL_ADMIN_MAX_COLUMNS];
    int shown[SCL_ADMIN_MAX_COLUMNS]; /* the store's column of each of the table's */
    int nshown;
    struct table *table;
    struct table_row *last[4]; /* the last row at each depth */
    int nrows;
};

/* T as people read it (ISO 8601 with the UTC offset), or as JSON does
 * (epoch seconds), into OUT. */
static void format_time(time_t t, int json, char *out, size_t cap)
{
    struct tm tm;
    long off;

    if (json) {
        snprintf(out, cap, "%lld", (long long)t);
        return;
    }
    localtime_r(&t, &tm);
    off = tm.tm_gmtoff / 60;
    snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02d%c%02ld:%02ld", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min, tm.tm_sec, off < 0 ? '-' : '+', labs(off) / 60, labs(off) % 60);
}

/* SECONDS as people read a duration: "42s", "2m03s", "1h02m", "3d04h". */
static void format_duration(long long seconds, char *out, size_t cap)
{
    long long s = seconds < 0 ? 0 : seconds;

    if (s < 60)
        snprintf(out, cap, "%llds", s);
    else if (s < 3600)
        snprintf(out, cap, "%lldm%02llds", s / 60, s % 60);
    else if (s < 86400)
        snprintf(out, cap, "%lldh%02lldm", s / 3600, s % 3600 / 60);
    else
        snprintf(out, cap, "%lldd%02lldh", s / 86400, s % 86400 / 3600);
}

int rows_option(int c, const char *arg, struct rows_style *s)
{
    switch (c) {
    case 'J': s->style = TABLE_JSON; return 1;
    case 'r': s->style = TABLE_RAW; return 1;
    case 'H': s->noheadings = 1; return 1;
    case 'u': s->notruncate = 1; return 1;
    case 'o': s->output = arg; return 1;
    case 'O': s->all_columns = 1; return 1;
    default: return 0;
    }
}

/* Says, as a usage error, that --output's TOK is no column of COLS (or,
 * when TOK is NULL, that it names none, or too many): -1. */
static int bad_columns(const char *tok, const struct scl_admin_column *cols, int ncols)
{
    char names[256] = "";

    for (int c = 0; c < ncols; c++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", c ? "," : "", cols[c].name);
    if (tok != NULL)
        tool_usage_error("unknown column '%s' (columns: %s)", tok, names);
    else
        tool_usage_error("--output takes from one to %d of the columns %s", ncols, names);
    return -1;
}

/* Parses LIST, comma-separated names of the store's COLS (any case), into
 * SHOWN: how many, or says why not and returns -1. */
static int parse_columns(const char *list, const struct scl_admin_column *cols, int ncols, int *shown)
{
    char *copy = strdup(list), *tok, *save = NULL;
    int n = 0;

    if (copy == NULL) {
        tool_error("out of memory");
        return -1;
    }
    for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int c = 0; c < ncols; c++)
            if (strcasecmp(tok, cols[c].name) == 0)
                found = c;
        if (found < 0 || n == ncols) {
            bad_columns(found < 0 ? tok : NULL, cols, ncols);
            free(copy);
            return -1;
        }
        shown[n++] = found;
    }
    free(copy);
    return n > 0 ? n : bad_columns(NULL, cols, ncols);
}

/* The table's columns for R's style, of its listing, with those of
 * SCL_COLUMN_SERVERS when SEVERAL: how many, or -1 (said why). */
static int choose_columns(struct rows *r, int several)
{
    const struct scl_admin_listing *ls = r->listing;
    const struct rows_style *s = r->style;
    int n = 0;

    if (s->output != NULL) {
        if ((n = parse_columns(s->output, ls->columns, ls->ncolumns, r->shown)) < 0)
            return -1;
    } else {
        for (int c = 0; c < ls->ncolumns; c++)
            if (s->all_columns || (ls->columns[c].flags & SCL_COLUMN_USUAL) ||
                (several && (ls->columns[c].flags & SCL_COLUMN_SERVERS)))
                r->shown[n++] = c;
    }
    for (int i = 0; i < n; i++) {
        const struct scl_admin_column *c = &ls->columns[r->shown[i]];
        r->cols[i] = (struct table_column){
            .name = c->name,
            .width = c->width,
            .tree = (c->flags & SCL_COLUMN_TREE) != 0,
            .right = (c->flags & SCL_COLUMN_RIGHT) != 0,
            .truncate = (c->flags & SCL_COLUMN_TRUNCATE) != 0 && !s->notruncate,
            .number = (c->flags & SCL_COLUMN_NUMBER) != 0 ||
                      (s->style == TABLE_JSON && (c->flags & (SCL_COLUMN_TIME | SCL_COLUMN_DURATION))), /* seconds */
        };
    }
    return n;
}

/* Chooses the columns of listing LS that S asks for: 0, or TOOL_USAGE (a
 * column it does not have: said).  Before any work: a usage error costs
 * none. */
static int rows_choose(struct rows *r, const struct scl_admin_listing *ls, const struct rows_style *s)
{
    memset(r, 0, sizeof *r);
    r->listing = ls;
    r->style = s;
    return (r->nshown = choose_columns(r, 0)) < 0 ? TOOL_USAGE : TOOL_OK;
}

/* A first look at the rows: whether those of column COL differ (rows of
 * more than one server). */
struct servers_seen {
    int col, have, several;
    char first[320];
};

static void note_server(int depth, const char *const *values, void *arg)
{
    struct servers_seen *seen = arg;

    (void)depth;
    if (!seen->have)
        snprintf(seen->first, sizeof seen->first, "%s", values[seen->col]);
    else if (strncmp(seen->first, values[seen->col], sizeof seen->first - 1) != 0)
        seen->several = 1;
    seen->have = 1;
}

/* Adds R's columns of SCL_COLUMN_SERVERS when no columns were asked for
 * and the rows SEL selects are of more than one server: whenever rows of
 * several servers are shown, each says whose it is (`run`'s own and a
 * server's hold of one name look like two holders at once otherwise). */
static void add_servers_column(struct rows *r, const struct scl_admin_select *sel)
{
    const struct scl_admin_listing *ls = r->listing;
    struct servers_seen seen = { .col = -1 };

    if (r->style->output != NULL || r->style->all_columns)
        return;
    for (int c = 0; c < ls->ncolumns; c++)
        if (ls->columns[c].flags & SCL_COLUMN_SERVERS)
            seen.col = c;
    if (seen.col < 0)
        return;
    (void)ls->rows(sel, note_server, &seen);
    if (seen.several)
        r->nshown = choose_columns(r, 1);
}

/* Starts the table: 0, or -1 (said why). */
static int rows_open(struct rows *r)
{
    r->table = table_new(r->listing->json_name, r->cols, r->nshown, r->style->style, r->style->noheadings);
    return r->table != NULL ? 0 : -1;
}

/* Adds a row (scl_admin_row_fn: ARG is the struct rows). */
static void rows_add(int depth, const char *const *values, void *arg)
{
    struct rows *r = arg;
    int max = (int)(sizeof r->last / sizeof r->last[0]) - 1;
    struct table_row *row;

    depth = depth < 0 ? 0 : depth > max ? max : depth;
    row = table_row(r->table, depth > 0 ? r->last[depth - 1] : NULL);
    r->last[depth] = row;
    r->nrows++;
    for (int i = 0; i < r->nshown; i++) {
        const char *v = values[r->shown[i]];
        unsigned flags = r->listing->columns[r->shown[i]].flags;
        int json = r->style->style == TABLE_JSON;
        char shown[96]; /* room for any time format_time() can be given */
        if ((flags & SCL_COLUMN_TIME) && v[0] != '\0') {
            format_time((time_t)strtoll(v, NULL, 10), json, shown, sizeof shown);
            v = shown;
        } else if ((flags & SCL_COLUMN_DURATION) && v[0] != '\0' && !json) {
            format_duration(strtoll(v, NULL, 10), shown, sizeof shown);
            v = shown;
        }
        table_set(row, i, v);
    }
}

/* Prints the table and frees it. */
/* Prints the rows; no rows, nothing (a header alone would tell a script
 * or a monitoring check that something matched), but for JSON, whose
 * empty list says it. */
static void rows_print(struct rows *r)
{
    if (r->nrows > 0 || r->style->style == TABLE_JSON)
        table_print_and_free(r->table);
    else
        table_free(r->table);
    r->table = NULL;
}

int rows_show(const struct scl_admin_listing *ls, const struct rows_style *style, struct scl_admin_select *sel,
              const char *server, int *loaded)
{
    const struct scl_admin_directories *dirs_of = scl_store_admin()->directories;
    int directories = (scl_store_admin()->can & SCL_ADMIN_DIRECTORIES) != 0, matched, err;
    struct scl_admin_dirs *dirs = NULL;
    struct rows r;

    *loaded = 0;
    if (rows_choose(&r, ls, style) != TOOL_OK)
        return ROWS_USAGE;
    if (directories && (*loaded = dirs_of->load(server, sel->pid, &dirs)) < 0)
        return ROWS_SAID;
    sel->dirs = dirs;
    if (directories && dirs_of->count(dirs) == 0 && *loaded == 0)
        tool_error("note: no claim directory in %s (--base, or -s PID for a server's wherever it is)",
                   dirs_of->looked());
    add_servers_column(&r, sel);
    if (rows_open(&r) != 0) {
        if (directories)
            dirs_of->free(dirs);
        return ROWS_SAID;
    }
    matched = ls->rows(sel, rows_add, &r);
    err = errno;
    rows_print(&r);
    if (directories)
        dirs_of->free(dirs);
    sel->dirs = NULL;
    errno = err;
    return matched;
}
