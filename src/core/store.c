/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "hot.h"
#include "store.h"
#include "stores.h"

#include <stdatomic.h>

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

/* The row in use, once asked (-1 before): what chooses it is read once,
 * so every hook and call after the first pays one load, as the test of a
 * setting did. */
SCL_HOT static atomic_int chosen_row = -1;

size_t scl_store_row(void)
{
    int row = atomic_load_explicit(&chosen_row, memory_order_relaxed);

    if (row >= 0)
        return (size_t)row;
    row = 0;
    while ((size_t)row < sizeof stores / sizeof stores[0] - 1 && !stores[row].chosen())
        row++;
    atomic_store_explicit(&chosen_row, row, memory_order_relaxed);
    return (size_t)row;
}

const struct scl_store_ops *scl_store(void)
{
    return stores[scl_store_row()].ops;
}
