/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "journaled.h"
#include "names.h"

#include <stdlib.h>
#include <string.h>

/* The first names live in static storage: a child of a multithreaded
 * fork may take claims through handles made before the fork, and must not
 * allocate to do so (another thread of its parent may have held the
 * allocator's lock).  For the same reason a child abandons its parent's
 * table rather than free it.  Past the static slots, an open-addressing
 * table on the heap. */
#define STATIC_NAMES 64

static struct {
    char first[STATIC_NAMES][SCL_FNAME_MAX];
    size_t first_used;
    char **slots; /* the heap table, a power of two in size */
    size_t cap, used;
    pid_t pid;
    unsigned gen;
} journaled;

static void journaled_reset(pid_t pid, unsigned gen)
{
    if (journaled.pid == pid) { /* this process's own table: a new directory */
        for (size_t i = 0; i < journaled.cap; i++)
            free(journaled.slots[i]);
        free(journaled.slots);
    } /* else a forked child: the parent's table is abandoned, not freed */
    journaled.slots = NULL;
    journaled.cap = journaled.used = journaled.first_used = 0;
    journaled.pid = pid;
    journaled.gen = gen;
}

/* The heap slot that holds FNAME, or the empty one where it belongs. */
static char **journaled_slot(const char *fname)
{
    size_t i = scl_name_hash(fname) & (journaled.cap - 1);

    while (journaled.slots[i] != NULL && strcmp(journaled.slots[i], fname) != 0)
        i = (i + 1) & (journaled.cap - 1);
    return &journaled.slots[i];
}

static int journaled_grow(void)
{
    char **old = journaled.slots;
    size_t old_cap = journaled.cap, cap = old_cap == 0 ? 64 : old_cap * 2;
    char **slots = calloc(cap, sizeof *slots);

    if (slots == NULL)
        return -1;
    journaled.slots = slots;
    journaled.cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i] != NULL)
            *journaled_slot(old[i]) = old[i];
    free(old);
    return 0;
}

int scl_journaled_has(const char *fname)
{
    for (size_t i = 0; i < journaled.first_used; i++)
        if (strcmp(journaled.first[i], fname) == 0)
            return 1;
    return journaled.cap != 0 && *journaled_slot(fname) != NULL;
}

int scl_journaled_add(const char *fname)
{
    char *copy;

    if (journaled.first_used < STATIC_NAMES) {
        strcpy(journaled.first[journaled.first_used++], fname);
        return 0;
    }
    if ((journaled.used + 1) * 2 > journaled.cap && journaled_grow() != 0)
        return -1;
    copy = strdup(fname);
    if (copy == NULL)
        return -1;
    *journaled_slot(fname) = copy;
    journaled.used++;
    return 0;
}

void scl_journaled_for(pid_t pid, unsigned gen)
{
    if (journaled.pid != pid || journaled.gen != gen)
        journaled_reset(pid, gen);
}
