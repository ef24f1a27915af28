/* SPDX-License-Identifier: MIT */
/*
 * A store's rows in a table (table.h), in the store's columns
 * (store_admin.h): which columns a command shows (-o, -O), times and
 * durations as people read them (or as JSON numbers), and the options
 * that say how.  What list and history share.
 */
#ifndef SCL_ROWS_H
#define SCL_ROWS_H

#include "store_admin.h"
#include "table.h"

/* How a table is printed: the options every table command takes. */
struct rows_style {
    const char *output; /* -o: the columns, comma-separated, or NULL */
    enum table_style style;
    int noheadings, notruncate, all_columns;
};

/* Their getopt entries and letters ("JrHuo:O"). */
#define ROWS_OPTIONS                                                                                                   \
    { "json", no_argument, NULL, 'J' }, { "raw", no_argument, NULL, 'r' }, { "noheadings", no_argument, NULL, 'H' },   \
        { "notruncate", no_argument, NULL, 'u' }, { "output", required_argument, NULL, 'o' },                          \
    {                                                                                                                  \
        "output-all", no_argument, NULL, 'O'                                                                           \
    }
#define ROWS_SHORTOPTS "JrHuo:O"

/* Takes option C (ARG its argument) into S: 1 when it is one of them. */
int rows_option(int c, const char *arg, struct rows_style *s);

/* The whole of a command that prints a store's listing LS in the columns
 * STYLE asks for: the directories SERVER names (all of them, and -p's
 * PID's, without it) read first for a store of directories, into SEL, and
 * the rows SEL selects printed.  How many matched (the listing's count),
 * -1 when the listing failed (the caller says why, from errno), ROWS_SAID
 * when something else did (said) or ROWS_USAGE (a column the listing does
 * not have: said); *LOADED is 1 when a directory was too big to read
 * (said). */
#define ROWS_SAID  (-2)
#define ROWS_USAGE (-3)
int rows_show(const struct scl_admin_listing *ls, const struct rows_style *style, struct scl_admin_select *sel,
              const char *server, int *loaded);

#endif
