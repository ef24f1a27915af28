/* Replacing a file whole, as node_exporter's textfile collector asks of
 * what writes its files: a reader sees the old file or the new one, never
 * a part of either. */
#include "config.h"

#include "sigsafe.h"
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Writes TEXT (LEN bytes) to a new file in DIR named after BASE (".BASE.XXXXXX":
 * no collector takes it for one of its *.prom files), mode 0644, on disk:
 * its name in TMP, or -1 with errno (and nothing left). */
static int write_temp(const char *dir, const char *base, const char *text, size_t len, char *tmp, size_t cap)
{
    int fd, saved;

    if (snprintf(tmp, cap, "%s/.%s.XXXXXX", dir, base) >= (int)cap) {
        errno = ENAMETOOLONG;
        return -1;
    }
    fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return -1;
    /* Readable by the collector, which seldom runs as the writer's user,
     * whatever the umask. */
    if (fchmod(fd, 0644) == 0 && scl_write_full(fd, text, len) == 0 && fsync(fd) == 0) {
        if (close(fd) == 0)
            return 0;
        fd = -1;
    }
    saved = errno;
    if (fd >= 0)
        close(fd);
    (void)unlink(tmp);
    errno = saved;
    return -1;
}

int tool_replace_file(const char *path, const char *text, size_t len)
{
    char *copies[2] = { strdup(path), strdup(path) }, tmp[PATH_MAX];
    sigset_t ending, was;
    int r = -1, dirfd;

    if (copies[0] == NULL || copies[1] == NULL) {
        errno = ENOMEM;
    } else {
        const char *dir = dirname(copies[0]), *base = basename(copies[1]);
        /* An interrupt between the temporary's making and its renaming
         * would leave it: it waits until the file is one or the other. */
        sigemptyset(&ending);
        sigaddset(&ending, SIGINT);
        sigaddset(&ending, SIGTERM);
        sigaddset(&ending, SIGHUP);
        sigaddset(&ending, SIGQUIT);
        sigprocmask(SIG_BLOCK, &ending, &was);
        if (write_temp(dir, base, text, len, tmp, sizeof tmp) == 0) {
            if ((r = rename(tmp, path)) != 0) {
                int saved = errno;
                (void)unlink(tmp);
                errno = saved;
            } else if ((dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
                (void)fsync(dirfd); /* the rename on disk too: best effort */
                close(dirfd);
            }
        }
        sigprocmask(SIG_SETMASK, &was, NULL);
    }
    if (r != 0)
        tool_error("cannot write %s: %s", path, strerror(errno));
    free(copies[0]);
    free(copies[1]);
    return r;
}
