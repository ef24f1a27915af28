/* SPDX-License-Identifier: MIT */
/*
 * The table of table.h without libsmartcols: raw lines, one a row, the
 * values separated by one space and escaped as libsmartcols' raw output
 * escapes them (\x20 for a space, \xHH for what is not printable), so
 * scripts read the same either way.  No tree and no JSON.
 */
#include "config.h"

#include "table.h"
#include "tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct table_row {
    struct table_row *next;
    char *values[];
};

struct table {
    int ncols, noheadings;
    struct table_row *first, **last;
    const char *names[]; /* the columns' (static strings) */
};

struct table *table_new(const char *json_name, const struct table_column *cols, int ncols, enum table_style style,
                        int noheadings)
{
    struct table *t;

    (void)json_name;
    if (style == TABLE_JSON) {
        tool_error("--json needs libsmartcols, which this build of swerve-claim was made without");
        return NULL;
    }
    t = calloc(1, sizeof *t + (size_t)ncols * sizeof t->names[0]);
    if (t == NULL) {
        tool_error("out of memory");
        return NULL;
    }
    for (int i = 0; i < ncols; i++)
        t->names[i] = cols[i].name;
    t->ncols = ncols;
    t->noheadings = noheadings;
    t->last = &t->first;
    return t;
}

struct table_row *table_row(struct table *t, struct table_row *parent)
{
    struct table_row *row = calloc(1, sizeof *row + (size_t)t->ncols * sizeof row->values[0]);

    (void)parent; /* flat: no tree */
    if (row == NULL)
        return NULL;
    *t->last = row;
    t->last = &row->next;
    return row;
}

void table_set(struct table_row *row, int col, const char *v)
{
    if (row != NULL && v != NULL && *v != '\0')
        row->values[col] = strdup(v);
}

void table_free(struct table *t)
{
    for (struct table_row *row = t->first, *next; row != NULL; row = next) {
        next = row->next;
        for (int i = 0; i < t->ncols; i++)
            free(row->values[i]);
        free(row);
    }
    free(t);
}

void table_print_and_free(struct table *t)
{
    for (int i = 0; i < t->ncols && !t->noheadings; i++)
        printf("%s%s", i > 0 ? " " : "", t->names[i]);
    if (!t->noheadings)
        putchar('\n');
    for (const struct table_row *row = t->first; row != NULL; row = row->next) {
        for (int i = 0; i < t->ncols; i++) {
            if (i > 0)
                putchar(' ');
            if (row->values[i] != NULL)
                tool_put_escaped(stdout, row->values[i], 1);
        }
        putchar('\n');
    }
    table_free(t);
}
