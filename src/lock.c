#include "config.h"

#include "lock.h"

#include <pthread.h>
#include <signal.h>

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;

/* initial-exec: a preloaded library has static TLS, and the general model
 * may call malloc on first access, which a signal path must not. */
static __thread sigset_t saved_mask __attribute__((tls_model("initial-exec")));

void scl_lock(void)
{
    sigset_t all;

    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved_mask);
    pthread_mutex_lock(&mutex);
}

void scl_unlock(void)
{
    pthread_mutex_unlock(&mutex);
    pthread_sigmask(SIG_SETMASK, &saved_mask, NULL);
}

void scl_lock_reset_in_child(void)
{
    pthread_mutex_init(&mutex, NULL);
    pthread_sigmask(SIG_SETMASK, &saved_mask, NULL);
}
