/* SPDX-License-Identifier: MIT */
/*
 * The table swerve-claim list prints: rows, some under others (a tree),
 * shown as a table, raw lines or JSON.  table_scols.c prints it through
 * libsmartcols, as lslocks does; table_plain.c, built when configure finds
 * no libsmartcols, prints raw lines only.
 */
#ifndef SCL_TABLE_H
#define SCL_TABLE_H

struct table_column {
    const char *name;
    double width; /* columns, or a fraction of the terminal below 1 */
    int tree;     /* the column that draws the tree */
    int right;    /* right-aligned */
    int truncate; /* may be cut to fit */
    int number;   /* a number in JSON */
};

enum table_style { TABLE_TREE, TABLE_RAW, TABLE_JSON };

struct table;
struct table_row;

/* A table of NCOLS columns, its rows under JSON_NAME in JSON, or NULL with a message
 * on standard error (out of memory; a style this build cannot print). */
struct table *table_new(const char *json_name, const struct table_column *cols, int ncols, enum table_style style,
                        int noheadings);

/* A new row, under PARENT when not NULL. */
struct table_row *table_row(struct table *t, struct table_row *parent);

/* Sets column COL of ROW to V ("" or NULL: empty). */
void table_set(struct table_row *row, int col, const char *v);

/* Prints the table on standard output, then frees it. */
void table_print_and_free(struct table *t);

/* Frees the table, printing nothing. */
void table_free(struct table *t);

#endif
