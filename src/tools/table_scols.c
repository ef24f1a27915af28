/* SPDX-License-Identifier: MIT */
/* The table of table.h, through libsmartcols. */
#include "config.h"

#include "table.h"
#include "tool.h"

#include <libsmartcols/libsmartcols.h>
#include <stddef.h>

struct table *table_new(const char *json_name, const struct table_column *cols, int ncols, enum table_style style,
                        int noheadings)
{
    struct libscols_table *tb = scols_new_table();

    if (tb == NULL) {
        tool_error("out of memory");
        return NULL;
    }
    scols_table_enable_json(tb, style == TABLE_JSON);
    scols_table_set_name(tb, json_name);
    scols_table_enable_raw(tb, style == TABLE_RAW);
    scols_table_enable_noheadings(tb, noheadings);
    for (int i = 0; i < ncols; i++) {
        /* Raw output is for scripts: flat, no tree art. */
        int flags = (cols[i].tree && style != TABLE_RAW ? SCOLS_FL_TREE : 0) | (cols[i].right ? SCOLS_FL_RIGHT : 0) |
                    (cols[i].truncate ? SCOLS_FL_TRUNC : 0);
        struct libscols_column *col = scols_table_new_column(tb, cols[i].name, cols[i].width, flags);
        if (col == NULL) {
            tool_error("out of memory");
            scols_unref_table(tb);
            return NULL;
        }
        scols_column_set_json_type(col, cols[i].number ? SCOLS_JSON_NUMBER : SCOLS_JSON_STRING);
    }
    return (struct table *)tb;
}

struct table_row *table_row(struct table *t, struct table_row *parent)
{
    return (struct table_row *)scols_table_new_line((struct libscols_table *)t, (struct libscols_line *)parent);
}

void table_set(struct table_row *row, int col, const char *v)
{
    if (row != NULL && v != NULL && *v != '\0')
        scols_line_set_data((struct libscols_line *)row, (size_t)col, v);
}

void table_free(struct table *t)
{
    scols_unref_table((struct libscols_table *)t);
}

void table_print_and_free(struct table *t)
{
    scols_print_table((struct libscols_table *)t);
    table_free(t);
}
