/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "libpq.h"
#include "log.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>

static struct scl_libpq pq;
static int loaded; /* 1 loaded, -1 failed: both final */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const struct {
    const char *symbol;
    size_t offset;
} wanted[] = {
#define FN(field, symbol)                                                                                              \
    {                                                                                                                  \
        symbol, offsetof(struct scl_libpq, field)                                                                      \
    }
    FN(connectdbParams, "PQconnectdbParams"),
    FN(status, "PQstatus"),
    FN(errorMessage, "PQerrorMessage"),
    FN(finish, "PQfinish"),
    FN(socket, "PQsocket"),
    FN(backendPID, "PQbackendPID"),
    FN(exec, "PQexec"),
    FN(execParams, "PQexecParams"),
    FN(prepare, "PQprepare"),
    FN(execPrepared, "PQexecPrepared"),
    FN(resultStatus, "PQresultStatus"),
    FN(resultErrorField, "PQresultErrorField"),
    FN(ntuples, "PQntuples"),
    FN(getvalue, "PQgetvalue"),
    FN(getlength, "PQgetlength"),
    FN(getisnull, "PQgetisnull"),
    FN(clear, "PQclear"),
    FN(consumeInput, "PQconsumeInput"),
    FN(setNoticeReceiver, "PQsetNoticeReceiver"),
    FN(sendQueryParams, "PQsendQueryParams"),
    FN(sendPrepare, "PQsendPrepare"),
    FN(sendQueryPrepared, "PQsendQueryPrepared"),
    FN(isBusy, "PQisBusy"),
    FN(getResult, "PQgetResult"),
    FN(getCancel, "PQgetCancel"),
    FN(cancel, "PQcancel"),
    FN(freeCancel, "PQfreeCancel"),
    FN(connectionNeedsPassword, "PQconnectionNeedsPassword"),
    FN(connectionUsedPassword, "PQconnectionUsedPassword"),
    FN(sendQuery, "PQsendQuery"),
    FN(host, "PQhost"),
    FN(port, "PQport"),
    FN(db, "PQdb"),
    FN(user, "PQuser"),
#undef FN
};

static void load(void)
{
    /* RTLD_LOCAL: libpq's symbols (and libssl's) stay out of the host's
     * global scope, where they could replace the host's own. */
    void *lib = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);

    loaded = -1;
    if (lib == NULL) {
        scl_debug("PostgreSQL store: cannot load libpq.so.5 (Debian: apt-get install libpq5): %s", dlerror());
        return;
    }
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++) {
        void *fn = dlsym(lib, wanted[i].symbol);
        if (fn == NULL) {
            scl_debug("PostgreSQL store: libpq.so.5 has no %s: too old", wanted[i].symbol);
            return;
        }
        /* POSIX makes a function pointer and void * interchangeable for dlsym. */
        *(void **)(void *)((char *)&pq + wanted[i].offset) = fn;
    }
    loaded = 1;
}

const struct scl_libpq *scl_libpq(void)
{
    pthread_once(&once, load);
    if (loaded == 1)
        return &pq;
    errno = ELIBACC;
    return NULL;
}
