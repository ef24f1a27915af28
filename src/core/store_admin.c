#include "config.h"

#include "store_admin.h"
#include "stores.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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
