/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "store_admin.h"
#include "stores.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define DECLARE(name, chosen, ops, admin) extern const struct scl_store_admin admin;
SCL_STORES(DECLARE)

/* Each store's tool side, in the table's order. */
static const struct scl_store_admin *const admins[] = {
#define ROW(name, chosen, ops, admin) &admin,
    SCL_STORES(ROW)
};

const struct scl_store_admin *scl_store_admin(void)
{
    return admins[scl_store_row()];
}

static scl_admin_report_fn *report, *say;

void scl_admin_set_report(scl_admin_report_fn *fn)
{
    report = fn;
}

void scl_admin_set_say(scl_admin_report_fn *fn)
{
    say = fn;
}

/* FMT with AP, through the printer TO, when there is one. */
static void print_through(scl_admin_report_fn *to, const char *fmt, va_list ap)
{
    char *text;
    int n;

    if (to == NULL)
        return;
    n = vasprintf(&text, fmt, ap);
    to("%s", n < 0 ? "(out of memory)" : text);
    if (n >= 0)
        free(text);
}

void scl_admin_report(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    print_through(report, fmt, ap);
    va_end(ap);
}

void scl_admin_say(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    print_through(say, fmt, ap);
    va_end(ap);
}

static const char *base;
static int base_explicit;

void scl_admin_set_base(const char *dir, int explicit)
{
    base = dir;
    base_explicit = explicit;
}

const char *scl_admin_base(void)
{
    return base;
}

int scl_admin_base_explicit(void)
{
    return base_explicit;
}

const char *scl_admin_untrusted_dir(const struct stat *st)
{
    if (!S_ISDIR(st->st_mode))
        return "not a directory";
    if (st->st_uid != 0 && st->st_uid != geteuid())
        return "it belongs to another user";
    if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX))
        return "its group or others may write it without the sticky bit";
    return NULL;
}

const char *scl_admin_shown_name(const char *name)
{
    /* Four at once: no message names more than two. */
    static char shown[4][SCL_ADMIN_NAME_SHOWN * 4 + sizeof "…"];
    static unsigned next;
    char *out = shown[next++ % 4];
    size_t at = 0;

    for (unsigned chars = 0; name[at] != '\0' && chars < SCL_ADMIN_NAME_SHOWN; chars++)
        do /* a character's continuation bytes come with it */
            at++;
        while ((name[at] & 0xc0) == 0x80);
    if (name[at] == '\0')
        return name;
    snprintf(out, sizeof shown[0], "%.*s…", (int)at, name);
    return out;
}
