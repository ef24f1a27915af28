#include "config.h"

#include "settings.h"
#include "store_admin.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* src/fs/admin_fs.c, src/pg/admin.c */
extern const struct scl_store_admin scl_store_fs_admin, scl_store_pg_admin;

const struct scl_store_admin *scl_store_admin(void)
{
    return scl_settings()->store != NULL ? &scl_store_pg_admin : &scl_store_fs_admin;
}

static scl_admin_report_fn *report;

void scl_admin_set_report(scl_admin_report_fn *fn)
{
    report = fn;
}

void scl_admin_report(const char *fmt, ...)
{
    char *text;
    va_list ap;
    int n;

    if (report == NULL)
        return;
    va_start(ap, fmt);
    n = vasprintf(&text, fmt, ap);
    va_end(ap);
    report("%s", n < 0 ? "(out of memory)" : text);
    if (n >= 0)
        free(text);
}
