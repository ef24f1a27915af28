#include "config.h"

#include "store.h"
#include "stores.h"

#define DECLARE(name, chosen, ops, admin)                                                                              \
    int chosen(void);                                                                                                  \
    extern const struct scl_store_ops ops;
SCL_STORES(DECLARE)

static const struct {
    const char *name;
    int (*chosen)(void);
    const struct scl_store_ops *ops;
} stores[] = {
#define ROW(name, chosen, ops, admin) { #name, chosen, &ops },
    SCL_STORES(ROW)
};

size_t scl_store_row(void)
{
    size_t row = 0;

    while (row < sizeof stores / sizeof stores[0] - 1 && !stores[row].chosen())
        row++;
    return row;
}

const struct scl_store_ops *scl_store(void)
{
    return stores[scl_store_row()].ops;
}
