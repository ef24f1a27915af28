/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "budget.h"
#include "log.h"

int scl_budget_spend(struct scl_budget *b, unsigned long n)
{
    if (!b->gave_up && n <= b->left) {
        b->left -= n;
        return 0;
    }
    if (!b->gave_up)
        scl_debug("%s: gave up past its bound of %lu (the rest is left as it is)", b->walk, b->limit);
    b->gave_up = 1;
    b->left = 0;
    return -1;
}
