/* SPDX-License-Identifier: MIT */
/* The new image's environment (image_env.h). */
#include "config.h"

#include "image_env.h"
#include "log.h"
#include "sigsafe.h"
#include "store.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

/* Both static rooms on one page: a fork child that execs writes them, at
 * the cost of one copy-on-write fault.  Aligned to their size, and kept
 * out of .bss (in .lbss, which the linker puts after it): in .bss, that
 * alignment would start .bss on a page of its own whenever .data ended
 * in the second half of one (tests/packaging/layout.sh). */
static struct {
    _Alignas(2048) struct scl_room rooms[2];
    atomic_int taken[2];
} statics __attribute__((section(".lbss.scl_rooms")));

_Static_assert(sizeof statics <= 2048, "aligned to 2048, the static rooms share a page");

struct scl_room *scl_room_claim(enum scl_room_use use)
{
    int free = 0;

    /* Taken in the name of this process: a vfork child's, left taken by
     * its exec, is its parent's to give back (scl_rooms_left_by()). */
    if (!atomic_compare_exchange_strong(&statics.taken[use], &free, getpid()))
        return NULL;
    statics.rooms[use].mapped = NULL;
    statics.rooms[use].taken = &statics.taken[use];
    return &statics.rooms[use];
}

void scl_rooms_left_by(pid_t child)
{
    for (int use = SCL_ROOM_ARGV; use <= SCL_ROOM_ENV; use++) {
        struct scl_room *r = &statics.rooms[use];
        /* Still the child's, so nobody else's hands are on it: what it
         * mapped for a large vector (in this memory) goes, then the room. */
        if (atomic_load(&statics.taken[use]) != child)
            continue;
        if (r->mapped != NULL)
            (void)munmap(r->mapped, r->mapped_size);
        r->mapped = NULL;
        atomic_store(&statics.taken[use], 0);
    }
}

void scl_room_in_frame(struct scl_room *r)
{
    r->mapped = NULL;
    r->taken = NULL;
}

int scl_room_take(struct scl_room *r, size_t n, size_t text, char ***pointers, char **buf)
{
    size_t size = n * sizeof(char *) + text;
    void *p;

    r->mapped = NULL;
    if (n <= SCL_ROOM_POINTERS && text <= SCL_ROOM_TEXT) {
        *pointers = r->pointers;
        *buf = r->text;
        return 0;
    }
    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    r->mapped = p;
    r->mapped_size = size;
    *pointers = p;
    *buf = (char *)p + n * sizeof(char *);
    return 0;
}

void scl_room_free(struct scl_room *r)
{
    int saved = errno;

    if (r->mapped != NULL)
        (void)munmap(r->mapped, r->mapped_size);
    r->mapped = NULL;
    if (r->taken != NULL)
        atomic_store(r->taken, 0);
    errno = saved;
}

static int preloads_us(char *const *envp)
{
    for (size_t i = 0; envp != NULL && envp[i] != NULL; i++) {
        const char *preload = scl_after_prefix(envp[i], "LD_PRELOAD=");
        if (preload != NULL && scl_contains(preload, "swerveclaim"))
            return 1;
    }
    return 0;
}

/* The store's variable, when ENVP preloads us and it has one to pass. */
static int passed_on(char *const *envp, const char **name, const char **value)
{
    return preloads_us(envp) && scl_store()->exec_env(name, value);
}

int scl_image_env_differs(char *const *envp)
{
    const char *name, *value;

    return passed_on(envp, &name, &value);
}

char *const *scl_image_env(char *const *envp, struct scl_room *r)
{
    const char *name, *value;
    char **fixed, *var;
    size_t n, entries = 0;

    r->mapped = NULL;
    if (!passed_on(envp, &name, &value))
        return envp;
    while (envp[entries] != NULL)
        entries++;
    n = scl_length(name) + scl_length(value) + 2; /* '=' and the NUL */
    if (scl_room_take(r, entries + 2, n, &fixed, &var) != 0 ||
        scl_concat(var, n, name, "=", value, (char *)NULL) != 0) {
        if (r->mapped != NULL)
            (void)munmap(r->mapped, r->mapped_size);
        r->mapped = NULL;
        errno = ENOMEM;
        return NULL;
    }
    n = 0;
    for (size_t i = 0; envp[i] != NULL; i++) {
        const char *rest = scl_after_prefix(envp[i], name);
        if (rest == NULL || *rest != '=')
            fixed[n++] = envp[i];
    }
    fixed[n++] = var;
    fixed[n] = NULL;
    return fixed;
}

static int start_in(struct scl_room *room, scl_image_call *call, void *args, char *const envp[], int spawn)
{
    int saved = errno, r;
    char *const *fixed = scl_image_env(envp, room);

    /* An image that loads the shim without its server's directory would
     * make one of its own, and take names its server's members hold: it
     * does not start, as when the kernel finds no room for the variable. */
    if (fixed == NULL && envp != NULL) {
        scl_debug("no memory for the new image's environment: it does not start outside its claim directory");
        errno = spawn ? saved : ENOMEM;
        r = spawn ? ENOMEM : -1;
    } else {
        r = call(args, fixed);
        if (fixed != envp && (spawn ? r == E2BIG : r == -1 && errno == E2BIG))
            scl_debug("the new image's environment is too big with the claim directory in it: it does not start, "
                      "rather than start outside its claim directory");
    }
    scl_room_free(room);
    return r;
}

/* Apart, so that only a caller who finds the static room taken has the
 * room in its frame. */
__attribute__((noinline)) static int start_in_frame(scl_image_call *call, void *args, char *const envp[], int spawn)
{
    struct scl_room room;

    scl_room_in_frame(&room);
    return start_in(&room, call, args, envp, spawn);
}

int scl_start_image(scl_image_call *call, void *args, char *const envp[], int spawn)
{
    struct scl_room *room = scl_room_claim(SCL_ROOM_ENV);

    return room != NULL ? start_in(room, call, args, envp, spawn) : start_in_frame(call, args, envp, spawn);
}
