/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the claim engine, linked directly (no hooks): names, the
 * SHA-256 behind long names, /proc parsing, the signal-safe string
 * helpers, the settings read from the environment, and what the
 * filesystem store adds to the API's contract (tests/contract).  Each test runs in its
 * own forked child (Check's default); the API's with a fresh
 * SWERVE_TMPDIR.
 */
#include "config.h"

#include "dir.h"
#include "history.h"
#include "holder.h"
#include "log.h"
#include "names.h"
#include "proc.h"
#include "retire.h"
#include "settings.h"
#include "sha256.h"
#include "sigsafe.h"
#include "store.h"
#include "swerve/claim.h"
#include "times.h"
#include "wake.h"
#include "clock.h"
#include "testdir.h"
#include "wait_child.h"

#include "run_suite.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- names */

static const char *encode(const char *name)
{
    static char out[SCL_FNAME_MAX];

    scl_name_encode(name, strlen(name), out);
    return out;
}

START_TEST(test_names_plain_stay_readable)
{
    ck_assert_str_eq(encode("nightly-report"), "nightly-report");
    ck_assert_str_eq(encode("cache.warm_up:eu-1@v2"), "cache.warm_up:eu-1@v2");
}
END_TEST

START_TEST(test_names_unsafe_bytes_are_escaped)
{
    ck_assert_str_eq(encode("a/b"), "a%2Fb");
    ck_assert_str_eq(encode(".."), "%2E.");
    ck_assert_str_eq(encode("."), "%2E");
    ck_assert_str_eq(encode(".hidden"), "%2Ehidden");
    ck_assert_str_eq(encode("100%"), "100%25");
    ck_assert_str_eq(encode("two words\n"), "two%20words%0A");
    ck_assert_str_eq(encode("caf\xc3\xa9"), "caf%C3%A9");
}
END_TEST

static int cmp_pair(const void *a, const void *b)
{
    return strcmp(((const char *const *)a)[1], ((const char *const *)b)[1]);
}

START_TEST(test_names_round_trip_and_injective)
{
    /* Random short names: decode(encode(x)) == x, and no two distinct
     * names share a file name (sorted by file name, neighbours differ). */
    enum { count = 20000 };
    static char names[count][24], fnames[count][SCL_FNAME_MAX];
    static const char *pairs[count][2];
    char back[64];

    srand(42);
    for (int i = 0; i < count; i++) {
        size_t len = 1 + (size_t)rand() % 20;
        for (size_t j = 0; j < len; j++)
            names[i][j] = (char)(1 + rand() % 255);
        names[i][len] = '\0';
        scl_name_encode(names[i], len, fnames[i]);
        ck_assert_ptr_null(strchr(fnames[i], '/'));
        ck_assert_int_eq(scl_name_decode(fnames[i], back, sizeof back), (long)len);
        ck_assert_str_eq(back, names[i]);
        pairs[i][0] = names[i];
        pairs[i][1] = fnames[i];
    }
    qsort(pairs, count, sizeof pairs[0], cmp_pair);
    for (int i = 1; i < count; i++)
        if (strcmp(pairs[i - 1][1], pairs[i][1]) == 0)
            ck_assert_str_eq(pairs[i - 1][0], pairs[i][0]);
}
END_TEST

START_TEST(test_names_long_are_hashed_and_distinct)
{
    char a[SWERVE_CLAIM_NAME_MAX + 1], b[SWERVE_CLAIM_NAME_MAX + 1];
    char fa[SCL_FNAME_MAX], fb[SCL_FNAME_MAX], back[8];

    memset(a, '/', SWERVE_CLAIM_NAME_MAX);
    a[SWERVE_CLAIM_NAME_MAX] = '\0';
    memcpy(b, a, sizeof a);
    b[SWERVE_CLAIM_NAME_MAX - 1] = '.';
    ck_assert_uint_le(scl_name_encode(a, strlen(a), fa), SCL_FNAME_SHORT_MAX);
    ck_assert_uint_le(scl_name_encode(b, strlen(b), fb), SCL_FNAME_SHORT_MAX);
    ck_assert_str_ne(fa, fb);
    ck_assert(scl_name_is_hashed(fa));
    ck_assert_int_eq(scl_name_decode(fa, back, sizeof back), -1);
    /* The prefix never splits an escape. */
    ck_assert_int_eq(strncmp(strstr(fa, "%%") - 3, "%2F%%", 5), 0);
}
END_TEST

START_TEST(test_names_short_never_contain_hash_marker)
{
    /* "%%" separates a long name's hash; a short encoding never has it. */
    ck_assert(!scl_name_is_hashed(encode("%%")));
    ck_assert_str_eq(encode("%%"), "%25%25");
}
END_TEST

/* What the encoder never makes does not decode: a planted file name can
 * never pass for another claim's (found by tests/fuzz/fuzz_names). */
START_TEST(test_names_only_canonical_file_names_decode)
{
    char plain[SCL_FNAME_SHORT_MAX + 2], back[SCL_FNAME_MAX];

    memset(plain, 'a', sizeof plain - 1);
    plain[sizeof plain - 1] = '\0'; /* readable, but longer than a short form */
    ck_assert_int_eq(scl_name_decode(plain, back, sizeof back), -1);
    plain[SCL_FNAME_SHORT_MAX] = '\0';
    ck_assert_int_eq(scl_name_decode(plain, back, sizeof back), SCL_FNAME_SHORT_MAX);
    ck_assert_int_eq(scl_name_decode("%41", back, sizeof back), -1); /* 'A' stays as it is */
}
END_TEST

START_TEST(test_names_what_a_journal_may_name)
{
    ck_assert(scl_name_is_fname("nightly-report", 14));
    ck_assert(scl_name_is_fname("report%2Feu%0A%231", 18));
    ck_assert(!scl_name_is_fname("", 0));
    ck_assert(!scl_name_is_fname("a/b", 3));
    ck_assert(!scl_name_is_fname("/etc/passwd", 11));
    ck_assert(!scl_name_is_fname("..", 2));
    ck_assert(!scl_name_is_fname(".holder.1", 9));
    ck_assert(!scl_name_is_fname("two words", 9));
}
END_TEST

/* --------------------------------------------------------------- holder */

/* A pid that does not fit a pid_t is not one (found by
 * tests/fuzz/fuzz_holder: it was truncated). */
START_TEST(test_holder_header_pids_in_range)
{
    struct scl_proc_id id;

    ck_assert_int_eq(scl_holder_parse_id("990000001200 0\n", 15, &id), -1);
    ck_assert_int_eq(scl_holder_parse_id("4294967297 0\n", 13, &id), -1);
    ck_assert_int_eq(scl_holder_parse_id("0 1\n", 4, &id), -1);
    ck_assert_int_eq(scl_holder_parse_id("12 34", 5, &id), -1);
    ck_assert_int_eq(scl_holder_parse_id("2147483647 5\nx\n", 15, &id), 0);
    ck_assert_int_eq(id.pid, 2147483647);
    ck_assert(id.start == 5);
}
END_TEST

struct names_seen {
    char all[256];
};

static int collect(const char *fname, const char *tail, void *arg)
{
    struct names_seen *seen = arg;

    strcat(seen->all, fname);
    if (*tail != '\0') {
        strcat(seen->all, "=");
        strcat(seen->all, tail);
    }
    strcat(seen->all, ";");
    return 0;
}

/* Only lines that are one encoded name are used, however the journal is
 * cut into reads; a last line without its newline is not.  What follows a
 * tab comes with its name when the reader keeps it and it fits. */
START_TEST(test_journal_reader_takes_names_only)
{
    static const char journal[] = "123 456\nok\n/etc/passwd\n../x\n.holder.1\nlong%2Fname\tlong%2Fname\n"
                                  "two words\n\nlast\ttail\twith a tab\ntorn";
    struct scl_journal_reader r;
    struct names_seen whole = { "" }, bytes = { "" }, tails = { "" }, cut = { "" };
    char tail[64], small[5];

    scl_journal_begin(&r, NULL, 0);
    ck_assert_int_eq(scl_journal_feed(&r, journal, sizeof journal - 1, collect, &whole), 0);
    ck_assert_str_eq(whole.all, "ok;long%2Fname;last;");
    scl_journal_begin(&r, NULL, 0);
    for (size_t i = 0; i < sizeof journal - 1; i++)
        (void)scl_journal_feed(&r, journal + i, 1, collect, &bytes);
    ck_assert_str_eq(bytes.all, whole.all);
    scl_journal_begin(&r, tail, sizeof tail);
    for (size_t i = 0; i < sizeof journal - 1; i++)
        (void)scl_journal_feed(&r, journal + i, 1, collect, &tails);
    ck_assert_str_eq(tails.all, "ok;long%2Fname=long%2Fname;last=tail\twith a tab;");
    scl_journal_begin(&r, small, sizeof small); /* room for 4 bytes: longer tails are "" */
    ck_assert_int_eq(scl_journal_feed(&r, "0 0\na\tabcd\nb\tabcde\n", 20, collect, &cut), 0);
    ck_assert_str_eq(cut.all, "a=abcd;b;");
}
END_TEST

/* --------------------------------------------------------------- sha256 */

static void hex(const uint8_t *d, char *out)
{
    for (int i = 0; i < SCL_SHA256_LEN; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

START_TEST(test_sha256_vectors)
{
    static const struct {
        const char *in, *out;
    } v[] = {
        { "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
        { "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
        { "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
    };
    uint8_t d[SCL_SHA256_LEN];
    char h[2 * SCL_SHA256_LEN + 1];

    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        scl_sha256(v[i].in, strlen(v[i].in), d);
        hex(d, h);
        ck_assert_str_eq(h, v[i].out);
    }
}
END_TEST

/* ----------------------------------------------------------------- proc */

START_TEST(test_proc_parse_odd_command_names)
{
    struct scl_proc_stat st;
    const char *line = "4242 (a) b (c) ) S 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
                       "987654 1000 200 18446744073709551615\n";

    ck_assert_int_eq(scl_proc_parse_stat(line, &st), 0);
    ck_assert_int_eq(st.state, 'S');
    ck_assert_int_eq(st.ppid, 17);
    ck_assert_uint_eq(st.start, 987654);
    ck_assert_int_eq(scl_proc_parse_stat("12 (x) S 1 2", &st), -1);
    ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/* A server's unit, from its /proc/PID/cgroup: the last ".service" (a
 * user's manager runs units under its own user@UID.service). */
START_TEST(test_proc_unit_from_cgroup)
{
    static const struct {
        const char *cgroup, *unit;
    } cases[] = {
        { "0::/system.slice/nginx.service\n", "nginx.service" },
        { "0::/user.slice/user-1000.slice/user@1000.service/app.slice/web.service\n", "web.service" },
        { "0::/user.slice/user-1000.slice/session-2.scope\n", NULL },
        { "0::/\n", NULL },
        { "12:pids:/\n1:name=systemd:/system.slice/php8.2-fpm.service\n0::/\n", "php8.2-fpm.service" },
        { "0::/system.slice/.service\n", NULL },
    };
    char unit[64];

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int r = scl_proc_parse_unit(cases[i].cgroup, strlen(cases[i].cgroup), unit, sizeof unit);
        if (cases[i].unit == NULL) {
            ck_assert_int_eq(r, -1);
        } else {
            ck_assert_int_eq(r, 0);
            ck_assert_str_eq(unit, cases[i].unit);
        }
    }
    ck_assert_int_eq(scl_proc_parse_unit("0::/a.service", 14, unit, 9), -1); /* does not fit */
}
END_TEST

START_TEST(test_proc_liveness)
{
    struct scl_proc_id self = scl_proc_self(), other;
    pid_t child;

    ck_assert_uint_gt(self.start, 0);
    ck_assert_int_eq(scl_proc_alive(&self), 1);
    other = self;
    other.start++; /* the same pid, another start time: pid reuse */
    ck_assert_int_eq(scl_proc_alive(&other), 0);

    child = fork();
    if (child == 0)
        _exit(0);
    other.pid = child;
    other.start = 0;
    /* A zombie has ended. */
    for (int i = 0; i < 200 && scl_proc_alive(&other); i++)
        usleep(5000);
    ck_assert_int_eq(scl_proc_alive(&other), 0);
    ck_assert_int_eq(wait_exit_code(child), 0);
    ck_assert_int_eq(scl_proc_alive(&other), 0);
}
END_TEST

/* The command line the tools show and a holder notes: arguments joined
 * by spaces, trailing empty ones dropped, cut to the buffer. */
/* TracerPid from /proc/PID/status: a debugger's pid, 0, or malformed. */
START_TEST(test_proc_tracer)
{
    ck_assert_int_eq(scl_proc_parse_tracer("Name:\tsleep\nState:\tT (stopped)\nTracerPid:\t0\nUid:\t0\n"), 0);
    ck_assert_int_eq(scl_proc_parse_tracer("Name:\tgdb\nTracerPid:\t4242\n"), 4242);
    ck_assert_int_eq(scl_proc_parse_tracer("Name:\tTracerPid:\t7\n"), -1); /* a name, not the line */
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(scl_proc_parse_tracer("Name:\tx\nTracerPid:\t99999999999\n"), -1);
    ck_assert_int_eq(scl_proc_parse_tracer("Name:\tx\nTracerPid:\t\n"), -1);
    ck_assert_int_eq(scl_proc_read_tracer(getpid()), 0);
}
END_TEST

/* The four uids of /proc/PID/status's Uid line, all four or nothing. */
START_TEST(test_proc_uids)
{
    uid_t uids[4];

    ck_assert_int_eq(scl_proc_parse_uids("Name:\tx\nUid:\t33\t0\t33\t33\nGid:\t1\n", uids), 0);
    ck_assert(uids[0] == 33 && uids[1] == 0 && uids[2] == 33 && uids[3] == 33);
    ck_assert_int_eq(scl_proc_parse_uids("Name:\tx\nUid:\t33\t0\t33\n", uids), -1);
    ck_assert_int_eq(scl_proc_parse_uids("Name:\tx\nUid:\t33\t0\t33\t33x\n", uids), -1);
    ck_assert_int_eq(scl_proc_read_uids(getpid(), uids), 0);
    ck_assert(uids[0] == getuid() && uids[1] == geteuid());
}
END_TEST

START_TEST(test_proc_cmdline)
{
    char out[64], byte;
    int ready[2];
    pid_t child;
    ssize_t n;

    ck_assert_int_eq(pipe(ready), 0);
    child = fork();
    if (child == 0) {
        close(ready[0]);
        if (dup2(ready[1], 3) != 3)
            _exit(127);
        execl("/bin/sh", "sh", "-c", "echo >&3; sleep 5; :", "sh", "arg two", "", "", (char *)NULL);
        _exit(127);
    }
    close(ready[1]);
    ck_assert_int_eq(read(ready[0], &byte, 1), 1); /* the shell runs */
    close(ready[0]);
    n = scl_proc_read_cmdline(child, out, sizeof out);
    ck_assert_str_eq(out, "sh -c echo >&3; sleep 5; : sh arg two");
    ck_assert_int_eq((int)n, (int)strlen(out));
    ck_assert_int_eq(scl_proc_read_cmdline(child, out, 6), 5); /* cut to the buffer */
    ck_assert_str_eq(out, "sh -c");
    kill(child, SIGKILL);
    (void)wait_exit_code(child);
    errno = 0;
    ck_assert_int_eq(scl_proc_read_cmdline(child, out, sizeof out), -1);
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_int_gt(scl_proc_read_cmdline(0, out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "unit"));
}
END_TEST

/* ------------------------------------------------- strings and settings */

START_TEST(test_concat_fits_or_says_so)
{
    char out[8];

    ck_assert_int_eq(scl_concat(out, sizeof out, "ab", "", "cd", (char *)NULL), 0);
    ck_assert_str_eq(out, "abcd");
    ck_assert_int_eq(scl_concat(out, sizeof out, "abc", "defg", (char *)NULL), 0); /* 7 + NUL */
    ck_assert_str_eq(out, "abcdefg");
    errno = 0;
    ck_assert_int_eq(scl_concat(out, sizeof out, "abcd", "efgh", (char *)NULL), -1);
    ck_assert_int_eq(errno, ENAMETOOLONG);
    ck_assert_int_eq(scl_concat(out, sizeof out, (char *)NULL), 0);
    ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_prefix_and_contains)
{
    ck_assert_str_eq(scl_after_prefix("LD_PRELOAD=/x/lib.so", "LD_PRELOAD="), "/x/lib.so");
    ck_assert_str_eq(scl_after_prefix("abc", ""), "abc");
    ck_assert_ptr_null(scl_after_prefix("LD_PRELOA", "LD_PRELOAD="));
    ck_assert_ptr_null(scl_after_prefix("XLD_PRELOAD=", "LD_PRELOAD="));
    ck_assert_int_eq(scl_contains("/usr/lib/libswerveclaim_preload.so", "swerveclaim"), 1);
    ck_assert_int_eq(scl_contains("a:swerveclaim", "swerveclaim"), 1);
    ck_assert_int_eq(scl_contains("swerveclai", "swerveclaim"), 0);
    ck_assert_int_eq(scl_contains("sswerveclaim", "swerveclaim"), 1); /* a false start first */
    ck_assert_int_eq(scl_contains("", "x"), 0);
    ck_assert_int_eq(scl_contains("", ""), 1);
}
END_TEST

/* A holder file's name is its holder's pid: a link of it under another
 * pid's name is planted, and whoever opens it so takes it out (a worker
 * linked its own under 5,000 such names: issue 40). */
START_TEST(test_holder_named_for_another_pid_is_taken_out)
{
    char dir[] = "/tmp/scl-unit-planted.XXXXXX", own[SCL_PID_NAME_MAX], planted[SCL_PID_NAME_MAX];
    struct scl_proc_id self = scl_proc_self(), id;
    pid_t other = self.pid == 2 ? 3 : 2;
    int dirfd, fd;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(dirfd, 0);
    ck_assert_int_eq(scl_holder_register(dirfd, &self, 1), 0);
    scl_holder_path(own, self.pid);
    scl_holder_path(planted, other);
    ck_assert_int_eq(linkat(dirfd, own, dirfd, planted, 0), 0);
    errno = 0;
    ck_assert_int_eq(scl_holder_open_named(dirfd, planted, other, &id), -1);
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_int_ne(faccessat(dirfd, planted, F_OK, 0), 0);
    /* Its own name stays, and opens. */
    fd = scl_holder_open_named(dirfd, own, self.pid, &id);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(id.pid, self.pid);
    close(fd);
    ck_assert_int_eq(unlinkat(dirfd, own, 0), 0);
    close(dirfd);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* A clearer unlinks a name only while it is the inode it looked at: one
 * another process put there since stays. */
START_TEST(test_unlink_if_same_leaves_a_replacement)
{
    char dir[] = "/tmp/scl-unit-unlink.XXXXXX";
    struct stat first;
    int dirfd, fd;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(dirfd, 0);
    fd = openat(dirfd, "name", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(fstatat(dirfd, "name", &first, 0), 0);
    /* Replaced by another inode (made while the first still exists, so
     * that it cannot reuse its number): left, ESTALE. */
    fd = openat(dirfd, "other", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(renameat(dirfd, "other", dirfd, "name"), 0);
    errno = 0;
    ck_assert_int_eq(scl_unlink_if_same(dirfd, "name", first.st_dev, first.st_ino), -1);
    ck_assert_int_eq(errno, ESTALE);
    ck_assert_int_eq(faccessat(dirfd, "name", F_OK, 0), 0);
    /* The inode it looked at: unlinked. */
    ck_assert_int_eq(fstatat(dirfd, "name", &first, 0), 0);
    ck_assert_int_eq(scl_unlink_if_same(dirfd, "name", first.st_dev, first.st_ino), 0);
    ck_assert_int_ne(faccessat(dirfd, "name", F_OK, 0), 0);
    /* Gone: ENOENT. */
    errno = 0;
    ck_assert_int_eq(scl_unlink_if_same(dirfd, "name", first.st_dev, first.st_ino), -1);
    ck_assert_int_eq(errno, ENOENT);
    close(dirfd);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* A path one byte longer than a path can be. */
static char *too_long_path(void)
{
    char *path = malloc(PATH_MAX + 2);

    ck_assert_ptr_nonnull(path);
    memset(path, 'x', PATH_MAX + 1);
    path[0] = '/';
    path[PATH_MAX + 1] = '\0';
    return path;
}

/* Each test runs in a forked child: each reads the environment anew. */
START_TEST(test_settings_defaults)
{
    ck_assert_int_eq(unsetenv("SWERVE_TMPDIR"), 0);
    ck_assert_int_eq(unsetenv("TMPDIR"), 0);
    ck_assert_int_eq(unsetenv(SCL_DIR_ENV), 0);
    ck_assert_str_eq(scl_settings()->base_dir, "/tmp");
    ck_assert_str_eq(scl_settings()->claim_dir, "");
}
END_TEST

START_TEST(test_settings_from_the_environment)
{
    ck_assert_int_eq(setenv("SWERVE_TMPDIR", "/srv/claims", 1), 0);
    ck_assert_int_eq(setenv("TMPDIR", "/var/tmp", 1), 0);
    ck_assert_int_eq(setenv(SCL_DIR_ENV, "/srv/claims/swerve-claim.abc", 1), 0);
    ck_assert_str_eq(scl_settings()->base_dir, "/srv/claims");
    ck_assert_str_eq(scl_settings()->claim_dir, "/srv/claims/swerve-claim.abc");
}
END_TEST

START_TEST(test_settings_relative_and_read_once)
{
    char cwd[PATH_MAX], want[PATH_MAX + 16], *too_long = too_long_path();

    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    snprintf(want, sizeof want, "%s/rel", cwd);
    ck_assert_int_eq(setenv("SWERVE_TMPDIR", "", 1), 0); /* empty: TMPDIR next */
    ck_assert_int_eq(setenv("TMPDIR", "rel", 1), 0);
    ck_assert_int_eq(setenv(SCL_DIR_ENV, "not/absolute", 1), 0);
    ck_assert_str_eq(scl_settings()->base_dir, want);
    ck_assert_str_eq(scl_settings()->claim_dir, "");
    /* Servers wipe their workers' environment: what was read stays. */
    ck_assert_int_eq(setenv("TMPDIR", too_long, 1), 0);
    ck_assert_str_eq(scl_settings()->base_dir, want);
    free(too_long);
}
END_TEST

/* A base that cannot be used is an error to report, never /tmp instead;
 * SWERVE_CLAIM_DIR is only a hint, so a bad one is ignored. */
START_TEST(test_settings_too_long_is_an_error)
{
    char *too_long = too_long_path();

    ck_assert_int_eq(setenv("SWERVE_TMPDIR", too_long, 1), 0);
    ck_assert_int_eq(setenv(SCL_DIR_ENV, too_long, 1), 0);
    ck_assert_str_eq(scl_settings()->base_dir, "");
    ck_assert_int_eq(scl_settings()->base_error, ENAMETOOLONG);
    ck_assert_str_eq(scl_settings()->claim_dir, "");
    free(too_long);
}
END_TEST

/* ------------------------------------------------------------------ why
 * swerve_claim_why(): the last failed call's sentence, this thread's own. */

#define WHY_BASE "/nonexistent/scl-why-base"

static int why_says(const char *what)
{
    const char *why = swerve_claim_why();

    return why != NULL && strstr(why, what) != NULL;
}

START_TEST(test_why_names_the_missing_base)
{
    struct swerve_claim *c, *other;

    ck_assert_int_eq(setenv("SWERVE_TMPDIR", WHY_BASE, 1), 0);
    c = swerve_claim_new("report");
    other = swerve_claim_new("other");
    ck_assert(c != NULL && other != NULL);
    ck_assert_ptr_null(swerve_claim_why());
    errno = 0;
    ck_assert_ptr_null(swerve_claim_acquire(c, 0.0));
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_msg(why_says(WHY_BASE) && why_says("No such file or directory"), "why: %s", swerve_claim_why());
    /* free leaves it, as it leaves errno */
    swerve_claim_free(other);
    ck_assert_msg(why_says(WHY_BASE), "why after a free: %s", swerve_claim_why());
    ck_assert_int_eq(swerve_claim_available(c), 1); /* no directory: nobody holds it */
    ck_assert_ptr_null(swerve_claim_why());
    ck_assert_ptr_null(swerve_claim_acquire(c, 0.5));
    ck_assert_msg(why_says(WHY_BASE), "why: %s", swerve_claim_why());
    /* a call that fails for another reason says that one */
    ck_assert_ptr_null(swerve_claim_acquire(c, -1.0));
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_msg(why_says("timeout") && !why_says(WHY_BASE), "why: %s", swerve_claim_why());
    /* and one that does not fail clears it */
    ck_assert_int_eq(swerve_claim_draining(), 0);
    ck_assert_ptr_null(swerve_claim_why());
    swerve_claim_free(c);
}
END_TEST

START_TEST(test_why_of_a_name)
{
    char *long_name = malloc(SWERVE_CLAIM_NAME_MAX + 2);

    ck_assert_ptr_null(swerve_claim_new(""));
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_msg(why_says("must not be empty"), "why: %s", swerve_claim_why());
    ck_assert_ptr_nonnull(long_name);
    memset(long_name, 'n', SWERVE_CLAIM_NAME_MAX + 1);
    long_name[SWERVE_CLAIM_NAME_MAX + 1] = '\0';
    ck_assert_ptr_null(swerve_claim_new(long_name));
    ck_assert_int_eq(errno, ENAMETOOLONG);
    ck_assert_msg(why_says("4096 bytes"), "why: %s", swerve_claim_why());
    long_name[SWERVE_CLAIM_NAME_MAX] = '\0';
    struct swerve_claim *c = swerve_claim_new(long_name);
    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_null(swerve_claim_why());
    swerve_claim_free(c);
    free(long_name);
}
END_TEST

START_TEST(test_why_formats_every_conversion_it_is_given)
{
    scl_why_clear();
    scl_why("holds %zu names, at most %ld; mode %#o; %s", (size_t)1000, 1000L, 0750u, "said");
    ck_assert_str_eq(scl_why_said(), "holds 1000 names, at most 1000; mode 0750; said");
}
END_TEST

struct why_thread {
    pthread_barrier_t *failed, *read;
    const char *seen; /* what the thread's own why said once the other had failed */
};

static void *fail_an_empty_name(void *arg)
{
    struct why_thread *t = arg;

    pthread_barrier_wait(t->failed); /* the main thread's acquire failed */
    t->seen = swerve_claim_why();
    (void)swerve_claim_new("");
    pthread_barrier_wait(t->read);
    return NULL;
}

START_TEST(test_why_is_each_threads_own)
{
    pthread_barrier_t failed, read;
    struct why_thread t = { &failed, &read, "unset" };
    struct swerve_claim *c;
    pthread_t other;

    ck_assert_int_eq(setenv("SWERVE_TMPDIR", WHY_BASE, 1), 0);
    ck_assert_int_eq(pthread_barrier_init(&failed, NULL, 2), 0);
    ck_assert_int_eq(pthread_barrier_init(&read, NULL, 2), 0);
    ck_assert_int_eq(pthread_create(&other, NULL, fail_an_empty_name, &t), 0);
    c = swerve_claim_new("report");
    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_null(swerve_claim_acquire(c, 0.0));
    pthread_barrier_wait(&failed);
    pthread_barrier_wait(&read); /* the other thread's new("") failed */
    ck_assert_int_eq(pthread_join(other, NULL), 0);
    ck_assert_ptr_null(t.seen);
    ck_assert_msg(why_says(WHY_BASE), "this thread's why: %s", swerve_claim_why());
    swerve_claim_free(c);
}
END_TEST

/* ------------------------------------------------------------------ API
 * The API's contract, whatever the store, is tests/contract/contract.c;
 * here is what the filesystem store adds to it. */

START_TEST(test_nothing_on_disk_until_used)
{
    struct swerve_claim *c = swerve_claim_new("unused");

    ck_assert_ptr_nonnull(c);
    swerve_claim_free(c);
    ck_assert_int_eq(testdir_count(testdir_base), 0);
}
END_TEST

/* A worker may put a hard link to another file where this process's
 * holder file was: the journal is then never written (nor rolled back). */
START_TEST(test_journal_only_into_own_holder)
{
    struct swerve_claim *a = swerve_claim_new("first"), *b = swerve_claim_new("second");
    char *dir, *holder, *decoy, *tmp;
    struct stat before, after;
    int fd;

    ck_assert_ptr_eq(swerve_claim_acquire(a, 0.0), a);
    dir = testdir_claim_dir(testdir_base);
    ck_assert_ptr_nonnull(dir);
    ck_assert_int_ne(asprintf(&holder, "%s/claims/.holder.%d", dir, (int)getpid()), -1);
    ck_assert_int_ne(asprintf(&tmp, "%s/claims/.swap", dir), -1);
    ck_assert_int_ne(asprintf(&decoy, "%s/decoy", testdir_base), -1);
    fd = open(decoy, O_WRONLY | O_CREAT | O_EXCL, 0644);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "precious\n", 9), 9);
    close(fd);
    ck_assert_int_eq(link(decoy, tmp), 0);
    ck_assert_int_eq(rename(tmp, holder), 0);
    ck_assert_int_eq(stat(decoy, &before), 0);
    errno = 0;
    ck_assert_ptr_null(swerve_claim_acquire(b, 0.0));
    ck_assert_int_eq(errno, ESTALE);
    ck_assert_int_eq(stat(decoy, &after), 0);
    ck_assert(after.st_size == before.st_size && after.st_mtime == before.st_mtime);
    ck_assert_int_eq(unlink(holder), 0);
    swerve_claim_free(a);
    swerve_claim_free(b);
    free(dir);
    free(holder);
    free(tmp);
    free(decoy);
}
END_TEST

/* A directory NAME in the base with a wake file in it: its descriptor,
 * and its path in *TOP (to free). */
static int make_wake_file(const char *name, char **top)
{
    int topfd;

    ck_assert_int_ne(asprintf(top, "%s/%s", testdir_base, name), -1);
    ck_assert_int_eq(mkdir(*top, 0700), 0);
    topfd = open(*top, O_RDONLY | O_DIRECTORY);
    ck_assert_int_ge(topfd, 0);
    ck_assert_int_eq(scl_wake_create(topfd), 0);
    return topfd;
}

/* A wake file with a second name may be another file's link: never
 * mapped.  With one name again, it is. */
START_TEST(test_wake_file_with_two_names_is_not_mapped)
{
    char *top, *path, *other;
    unsigned count;
    int topfd = make_wake_file("swerve-claim.test", &top);

    ck_assert_int_ne(asprintf(&path, "%s/wake", top), -1);
    ck_assert_int_ne(asprintf(&other, "%s/other-name", testdir_base), -1);
    ck_assert_int_eq(link(path, other), 0);
    scl_wake_map(topfd, 1001);
    ck_assert_int_eq(scl_wake_revocations(&count), -1);
    ck_assert_int_eq(unlink(other), 0);
    scl_wake_map(topfd, 1002);
    ck_assert_int_eq(scl_wake_revocations(&count), 0);
    close(topfd);
    free(top);
    free(path);
    free(other);
}
END_TEST

/* A name whose slot in the wake file is NAME's (file names of the form
 * "nN"), another name: the two share the slot. */
static void name_in_same_slot(const char *name, char *out, size_t cap)
{
    size_t h = scl_name_hash(name);

    for (int i = 1; i < 1000000; i++) {
        size_t g;
        snprintf(out, cap, "n%d", i);
        g = scl_name_hash(out);
        if (g % 1023 == h % 1023 && ((g / 1023) | 1) != ((h / 1023) | 1))
            return;
    }
    ck_abort_msg("no name shares %s's slot", name);
}

/* What a waiter of X may do (1: try, 0: keep off) at each step of a
 * looper's turn on X, then beside the holder of Y in the same slot, then
 * after the turn; *ELAPSED: how long the steps in the turn took. */
struct turn_steps {
    int before_loop, in_loop, beside_other_name, after_turn, looper_again;
};

static void walk_turns(size_t x, size_t y, struct turn_steps *st, double *elapsed)
{
    struct scl_turn looper = { 1, 0 }, other = { 2, 0 }, me = { 0, 0 };
    double t0 = now_s();

    scl_wake_taken(x, &looper, 0); /* its turn begins */
    st->before_loop = scl_wake_may_take(x, &me, 1);
    scl_wake_taken(x, &looper, 0); /* again within its turn: a loop */
    st->in_loop = scl_wake_may_take(x, &me, 1);
    scl_wake_taken(y, &other, 0); /* Y's holder: X's turn goes on */
    st->beside_other_name = scl_wake_may_take(x, &me, 1);
    *elapsed = now_s() - t0;
    usleep(1000); /* the turn is over */
    st->after_turn = scl_wake_may_take(x, &me, 1);
    /* Its turn is over: it would hand the name to a waiter asleep, but
     * none sleeps here, so it may take it. */
    st->looper_again = scl_wake_may_take(x, &looper, 0);
}

/* Has waiter W kept off X by a looping turn, lets the turn end, then
 * sleeps once (for what kept it off: at once) and again (up to 20 ms,
 * with nobody to wake it): how long that second sleep took. */
static double kept_off_then_sleeps(size_t x, struct scl_wake_ticket *w)
{
    const struct timespec rel = { 0, 20 * 1000 * 1000 };
    struct scl_turn looper = { 3, 0 };
    int kept_off = 0;
    double t0;

    for (int i = 0; i < 50 && !kept_off; i++) {
        scl_wake_taken(x, &looper, 0);
        scl_wake_taken(x, &looper, 0);
        scl_wake_arm(w);
        kept_off = scl_wake_may_take(x, &w->turn, 1) == 0;
        usleep(1000); /* the turn ends */
    }
    ck_assert_msg(kept_off, "a looping turn never kept the waiter off");
    scl_wake_sleep(w, &rel);
    scl_wake_arm(w);
    t0 = now_s();
    scl_wake_sleep(w, &rel);
    return now_s() - t0;
}

/*
 * Turns (wake.h) are a name's: a thread that takes a name again within
 * its turn keeps that name's waiters off it until the turn ends, never
 * the waiters of another name that shares its slot, and a slot where two
 * names' waiters met keeps no turns at all.  (Thread ids 1 and 2 stand
 * for other threads: the slot knows threads by id alone.)  The steps of a
 * turn are walked again when the machine took longer than the turn.
 */
START_TEST(test_turns_are_one_names)
{
    char *top, y[32];
    size_t x_hash = scl_name_hash("n0"), y_hash;
    struct scl_wake_ticket wx, wy;
    struct turn_steps st;
    struct scl_turn looper = { 1, 0 }, me = { 0, 0 };
    double elapsed = 1;
    int topfd = make_wake_file("swerve-claim.turns", &top);

    scl_wake_map(topfd, 2001);
    ck_assert(scl_wake_is_mapped(2001));
    name_in_same_slot("n0", y, sizeof y);
    y_hash = scl_name_hash(y);
    /* Nobody waits: no turns, and no system call for the thread's id. */
    scl_wake_taken(x_hash, &looper, 0);
    scl_wake_taken(x_hash, &looper, 0);
    ck_assert_int_eq(scl_wake_may_take(x_hash, &me, 0), 1);
    ck_assert_int_eq(me.tid, 0);
    ck_assert_int_eq(scl_wake_enter(&wx, x_hash, scl_proc_self_tid()), 0);
    for (int i = 0; i < 50 && elapsed > 0.0003; i++)
        walk_turns(x_hash, y_hash, &st, &elapsed);
    ck_assert_msg(elapsed <= 0.0003, "the steps of a turn kept taking over 0.3 ms");
    ck_assert_int_eq(st.before_loop, 1);
    ck_assert_int_eq(st.in_loop, 0);
    ck_assert_int_eq(st.beside_other_name, 0);
    ck_assert_int_eq(st.after_turn, 1);
    ck_assert_int_eq(st.looper_again, 1);
    /* A try kept off by a turn that is over by its sleep retries at once;
     * the sleeps after it are whole ones, as nobody wakes them. */
    ck_assert(kept_off_then_sleeps(x_hash, &wx) >= 0.01);
    /* Y's waiters meet X's there: the slot keeps no turns from now on. */
    ck_assert_int_eq(scl_wake_enter(&wy, y_hash, scl_proc_self_tid()), 0);
    scl_wake_taken(x_hash, &looper, 0);
    scl_wake_taken(x_hash, &looper, 0);
    ck_assert_int_eq(scl_wake_may_take(x_hash, &me, 1), 1);
    scl_wake_leave(&wy, 1);
    scl_wake_leave(&wx, 1);
    close(topfd);
    free(top);
}
END_TEST

/* A named claim directory that others may change is refused with EPERM,
 * as dir.h says, not with whatever errno an earlier call left. */
START_TEST(test_named_directory_open_to_others_is_eperm)
{
    char *top, *claims;

    ck_assert_int_ne(asprintf(&top, "%s/swerve-claim.named", testdir_base), -1);
    ck_assert_int_ne(asprintf(&claims, "%s/claims", top), -1);
    ck_assert_int_eq(mkdir(top, 0700), 0);
    ck_assert_int_eq(mkdir(claims, 0700), 0);
    ck_assert_int_eq(chmod(top, 0707), 0);
    errno = 0;
    ck_assert_int_eq(scl_dir_use_named(testdir_base, "swerve-claim.named"), -1);
    ck_assert_int_eq(errno, EPERM);
    free(top);
    free(claims);
}
END_TEST

START_TEST(test_path_like_names_stay_inside)
{
    static const char *names[] = { "../../escape", "/etc/passwd", "..",     ".",       "a/b", "a%2Fb", "x",
                                   "x\n",          "%",           "sp ace", "\xff\xfe" };
    enum { n = sizeof names / sizeof names[0] };
    struct swerve_claim *c[n];
    char *dir, *claims;

    for (int i = 0; i < n; i++) {
        c[i] = swerve_claim_new(names[i]);
        ck_assert_msg(swerve_claim_acquire(c[i], 0.0) == c[i], "acquire %d: %s", i, strerror(errno));
    }
    /* Distinct names never conflict, and all of it lives in one claim
     * directory below the base. */
    ck_assert_int_eq(testdir_count(testdir_base), 1);
    dir = testdir_claim_dir(testdir_base);
    ck_assert_ptr_nonnull(dir);
    ck_assert_int_ne(asprintf(&claims, "%s/claims", dir), -1);
    /* Claims are the entries not starting with '.' (holder files do). */
    ck_assert_int_eq(testdir_count(claims) - testdir_count_prefix(claims, "."), n);
    for (int i = 0; i < n; i++)
        swerve_claim_free(c[i]);
    ck_assert_int_eq(testdir_count(claims) - testdir_count_prefix(claims, "."), 0);
    free(claims);
    free(dir);
}
END_TEST

START_TEST(test_directory_is_private)
{
    struct swerve_claim *c = swerve_claim_new("nightly-report");
    char *dir, *path, line[64];
    struct stat st;
    FILE *f;
    unsigned long pid;

    ck_assert_ptr_eq(swerve_claim_acquire(c, 0.0), c);
    dir = testdir_claim_dir(testdir_base);
    ck_assert_int_eq(stat(dir, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0700);
    /* `cat claims/NAME` shows the holder's pid. */
    ck_assert_int_ne(asprintf(&path, "%s/claims/nightly-report", dir), -1);
    ck_assert_int_eq(lstat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0644); /* the directory is the boundary */
    ck_assert_uint_eq(st.st_nlink, 2);          /* the holder file and this claim */
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    fclose(f);
    ck_assert_int_eq(sscanf(line, "%lu", &pid), 1);
    ck_assert_uint_eq(pid, (unsigned long)getpid());
    swerve_claim_free(c);
    free(path);
    free(dir);
}
END_TEST

/* A name goes into the holder's journal once per process, however many
 * handles take it: past the first 64 names (kept in static storage) too. */
START_TEST(test_journal_records_each_name_once)
{
    enum { names = 200 };
    char name[32], *dir, *path, line[512];
    int lines = 0;
    FILE *f;

    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < names; i++) {
            struct swerve_claim *c;
            snprintf(name, sizeof name, "name-%d", i);
            c = swerve_claim_new(name);
            ck_assert_ptr_eq(swerve_claim_acquire(c, 0.0), c);
            swerve_claim_free(c);
        }
    }
    dir = testdir_claim_dir(testdir_base);
    ck_assert_int_ne(asprintf(&path, "%s/claims/.holder.%d", dir, (int)getpid()), -1);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    while (fgets(line, sizeof line, f) != NULL)
        lines++;
    fclose(f);
    ck_assert_int_eq(lines, 1 + names); /* the header, then each name once */
    free(path);
    free(dir);
}
END_TEST

/* Without hooks (as here) nothing makes the directory before fork: a
 * process that has used a claim has one scoped to itself, which its
 * children then share. */
static void use_a_claim_first(void)
{
    struct swerve_claim *warm = swerve_claim_new("warm-up");

    ck_assert_ptr_eq(swerve_claim_acquire(warm, 0.0), warm);
    swerve_claim_free(warm);
}

static int claim_file_exists(const char *name)
{
    int exists = testdir_claim_exists(testdir_base, name);

    ck_assert_int_ge(exists, 0);
    return exists;
}

/* Claims of a holder that ended without releasing (no hooks here) count
 * as free and are cleared by the next acquire. */
START_TEST(test_dead_holder_counts_as_free)
{
    struct swerve_claim *c = swerve_claim_new("stale");
    pid_t child;

    use_a_claim_first();
    child = fork();
    if (child == 0)
        _exit(swerve_claim_acquire(c, 0.0) == c ? 0 : 1);
    ck_assert_int_eq(wait_exit_code(child), 0);
    ck_assert(claim_file_exists("stale"));
    ck_assert_int_eq(swerve_claim_available(c), 1);
    ck_assert_ptr_eq(swerve_claim_acquire(c, 0.0), c);
    ck_assert_int_eq(testdir_count(testdir_base), 1); /* one shared directory */
    swerve_claim_free(c);
}
END_TEST

/* A child that takes C's name, says so, and holds it until GO_FD's other
 * end closes; then ends, releasing first when RELEASE says so (no hooks
 * here: otherwise its claim stays, a dead holder's). */
static pid_t holding_child(struct swerve_claim *c, int release, int *go_fd)
{
    int ready[2], go[2];
    pid_t child;
    char byte = 0;

    ck_assert_int_eq(pipe(ready), 0);
    ck_assert_int_eq(pipe(go), 0);
    child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        close(ready[0]);
        close(go[1]);
        if (swerve_claim_acquire(c, 0.0) != c)
            _exit(1);
        if (write(ready[1], "h", 1) != 1 || read(go[0], &byte, 1) < 0) /* closed: go */
            _exit(1);
        _exit(release && swerve_claim_release(c) != 0 ? 1 : 0);
    }
    close(ready[1]);
    close(go[0]);
    ck_assert_int_eq(read(ready[0], &byte, 1), 1);
    close(ready[0]);
    *go_fd = go[1];
    return child;
}

/* C's name is held: said by the try and by available() (three times: the
 * handle remembers the live holder it found). */
static void assert_held(struct swerve_claim *c)
{
    for (int i = 0; i < 3; i++) {
        errno = 0;
        ck_assert_ptr_null(swerve_claim_acquire(c, 0.0));
        ck_assert_int_eq(errno, EWOULDBLOCK);
        ck_assert_int_eq(swerve_claim_available(c), 0);
    }
}

/* A child made by the clone system call itself (no fork handler runs in
 * it) does not take its parent's pid, which the API keeps without a
 * system call, for its own: the parent's claim is not its. */
START_TEST(test_cloned_child_is_not_its_parent)
{
    struct swerve_claim *c = swerve_claim_new("parent's");
    pid_t child;

    ck_assert_ptr_eq(swerve_claim_acquire(c, 0.0), c);
    ck_assert_int_eq(swerve_claim_held(c), 1);
    child = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);
    ck_assert_int_ge(child, 0);
    if (child == 0)
        _exit(swerve_claim_held(c) == 0 && swerve_claim_acquire(c, 0.0) == NULL && errno == EWOULDBLOCK ? 0 : 1);
    ck_assert_int_eq(wait_exit_code(child), 0);
    ck_assert_int_eq(swerve_claim_held(c), 1);
    swerve_claim_free(c);
}
END_TEST

/* A handle that remembers a live holder sees its release at once. */
START_TEST(test_released_claim_is_free_at_once)
{
    struct swerve_claim *c = swerve_claim_new("remembered");
    int go;
    pid_t child;

    use_a_claim_first();
    child = holding_child(c, 1, &go);
    assert_held(c);
    close(go);
    ck_assert_int_eq(wait_exit_code(child), 0);
    ck_assert_int_eq(swerve_claim_available(c), 1);
    ck_assert_ptr_eq(swerve_claim_acquire(c, 0.0), c);
    swerve_claim_free(c);
}
END_TEST

/* A holder that ended with nobody to clear its claim, not reaped yet (a
 * zombie, _i 0) or reaped by a process without the shim (_i 1), is nobody
 * within one retry period (20 ms) of when the handle last found it alive. */
START_TEST(test_ended_holder_is_free_within_the_retry_period)
{
    struct swerve_claim *c = swerve_claim_new("ended");
    siginfo_t info = { 0 };
    int go;
    pid_t child;

    use_a_claim_first();
    child = holding_child(c, 0, &go);
    assert_held(c);
    close(go); /* it ends */
    ck_assert_int_eq(waitid(P_PID, (id_t)child, &info, WEXITED | WNOWAIT), 0);
    ck_assert_int_eq(info.si_pid, child);
    if (_i == 1)
        ck_assert_int_eq(wait_exit_code(child), 0);
    ck_assert(claim_file_exists("ended")); /* nobody cleared it */
    usleep(25 * 1000);
    ck_assert_int_eq(swerve_claim_available(c), 1);
    ck_assert_ptr_eq(swerve_claim_acquire(c, 0.0), c);
    if (_i == 0)
        ck_assert_int_eq(wait_exit_code(child), 0);
    swerve_claim_free(c);
}
END_TEST

/* ------------------------------------------------------ pages of times */

/* This process's page of times (or process PID's), read as the tools read
 * it. */
static int read_page(pid_t pid, struct scl_times_page *page)
{
    char *dir = testdir_claim_dir(testdir_base);
    int fd, r;

    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    r = scl_times_read(fd, pid, page);
    close(fd);
    free(dir);
    return r;
}

static int64_t taken_at(const struct scl_times_page *page, const char *name)
{
    uint64_t h = scl_times_hash(encode(name));

    for (uint32_t i = 0; i < page->used; i++)
        if (page->taken[i].hash == h)
            return page->taken[i].at;
    return 0;
}

/* SINCE is when each claim was taken: what its holder does with other
 * names (a failed try, a name taken and let go) leaves it as it was, and
 * taking it again dates it anew. */
START_TEST(test_times_are_per_claim)
{
    struct swerve_claim *kept = swerve_claim_new("kept"), *other = swerve_claim_new("other");
    struct scl_times_page page;
    time_t now = (time_t)(wall_ns() / 1000000000);
    int64_t first;

    ck_assert_ptr_eq(swerve_claim_acquire(kept, 0.0), kept);
    ck_assert_int_eq(read_page(getpid(), &page), 0);
    first = taken_at(&page, "kept");
    ck_assert_int_gt(first, 0);
    ck_assert_int_le(llabs((long long)(scl_times_of(&page, encode("kept")) - now)), 2);
    ck_assert_ptr_eq(swerve_claim_acquire(other, 0.0), other);
    ck_assert_int_eq(swerve_claim_release(other), 0);
    ck_assert_int_eq(read_page(getpid(), &page), 0);
    ck_assert_int_eq(taken_at(&page, "kept"), first);
    ck_assert_int_gt(taken_at(&page, "other"), first);
    ck_assert_int_eq(swerve_claim_release(kept), 0);
    ck_assert_ptr_eq(swerve_claim_acquire(kept, 0.0), kept);
    ck_assert_int_eq(read_page(getpid(), &page), 0);
    ck_assert_int_gt(taken_at(&page, "kept"), first);
    swerve_claim_free(kept);
    swerve_claim_free(other);
}
END_TEST

/* 1 when the file NAME in directory DIR has every block of its size
 * allocated: a store through a mapping of it never meets a hole, which
 * on a full filesystem is a SIGBUS in the host, not an error. */
static int allocated_whole(const char *dir, const char *name)
{
    struct stat st;
    char *path;
    int r;

    ck_assert_int_ne(asprintf(&path, "%s/%s", dir, name), -1);
    r = stat(path, &st);
    free(path);
    ck_assert_int_eq(r, 0);
    return st.st_size > 0 && (off_t)st.st_blocks * 512 >= st.st_size;
}

/* The files the library maps in a claim directory (the wake file, each
 * page of times, the history) are allocated as they are made. */
START_TEST(test_mapped_files_have_no_holes)
{
    struct swerve_claim *c = swerve_claim_new("allocated");
    char *dir, page[SCL_PID_NAME_MAX];

    ck_assert_ptr_eq(swerve_claim_acquire(c, 0.0), c);
    dir = testdir_claim_dir(testdir_base);
    scl_times_path(page, getpid());
    ck_assert_msg(allocated_whole(dir, SCL_WAKE_FILE), "the wake file has holes");
    ck_assert_msg(allocated_whole(dir, page), "the page of times has holes");
    ck_assert_msg(allocated_whole(dir, SCL_HISTORY_FILE), "the history has holes");
    free(dir);
    swerve_claim_free(c);
}
END_TEST

/* A forked child writes a page of its own, never its parent's (which it
 * does not even have mapped: MADV_DONTFORK); and a dead holder's page goes
 * when its claims are cleared. */
START_TEST(test_times_page_is_each_process_own)
{
    struct swerve_claim *mine = swerve_claim_new("parent's"), *c = swerve_claim_new("child's");
    struct scl_times_page page;
    int64_t before;
    pid_t child;

    ck_assert_ptr_eq(swerve_claim_acquire(mine, 0.0), mine);
    ck_assert_int_eq(read_page(getpid(), &page), 0);
    before = taken_at(&page, "parent's");
    child = fork();
    if (child == 0) /* dies holding its claim: no hooks here to clear it */
        _exit(swerve_claim_acquire(c, 0.0) == c && read_page(getpid(), &page) == 0 && taken_at(&page, "child's") > 0 &&
                      taken_at(&page, "parent's") == 0
                  ? 0
                  : 1);
    ck_assert_int_eq(wait_exit_code(child), 0);
    ck_assert_int_eq(read_page(getpid(), &page), 0);
    ck_assert_int_eq(taken_at(&page, "parent's"), before);
    ck_assert_int_eq(taken_at(&page, "child's"), 0);
    ck_assert_int_eq(read_page(child, &page), 0);
    ck_assert_ptr_eq(swerve_claim_acquire(c, 0.0), c); /* clears the dead child */
    ck_assert_int_eq(read_page(child, &page), -1);
    ck_assert_int_eq(errno, ENOENT);
    swerve_claim_free(mine);
    swerve_claim_free(c);
}
END_TEST

/* A page whose holder was cleared without it (its clearer killed between
 * the two) does not keep the directory from being removed. */
START_TEST(test_left_page_does_not_keep_the_directory)
{
    char *dir, *page;
    pid_t child = fork();
    int fd;

    if (child == 0) { /* the directory's only member, gone without a trace but its claims */
        struct swerve_claim *c = swerve_claim_new("x");
        _exit(swerve_claim_acquire(c, 0.0) == c ? 0 : 1);
    }
    ck_assert_int_eq(wait_exit_code(child), 0);
    dir = testdir_claim_dir(testdir_base);
    ck_assert_int_ne(asprintf(&page, "%s/.times.%d", dir, INT_MAX), -1);
    fd = open(page, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(scl_retire_path(dir, 0, 0, SCL_RETIRE_ALL), 0);
    ck_assert_int_eq(testdir_count(testdir_base), 0);
    free(page);
    free(dir);
}
END_TEST

/* -------------------------------------------------------------- history */

/* The history of this test's claim directory, read as the tools read it
 * (malloc'ed). */
static struct scl_history_file *read_history(void)
{
    struct scl_history_file *f = malloc(sizeof *f);
    char *dir = testdir_claim_dir(testdir_base);
    int fd;

    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(dir);
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(scl_history_read(fd, f), 0);
    close(fd);
    free(dir);
    return f;
}

/* NAME's records in F, oldest first (at most N, into OUT): how many. */
static int holds_of(const struct scl_history_file *f, const char *name, const struct scl_history_record **out, int n)
{
    uint64_t h = scl_times_hash(encode(name));
    int found = 0;

    for (unsigned s = 0; s < SCL_HISTORY_NAMES; s++)
        for (unsigned i = 0; f->index[s].hash == h && i < SCL_HISTORY_RECORDS; i++)
            if (f->slots[s].records[i].hash == h && found < n)
                out[found++] = &f->slots[s].records[i];
    for (int a = 1; a < found; a++) /* by when they were taken */
        for (int b = a; b > 0 && out[b - 1]->taken > out[b]->taken; b--) {
            const struct scl_history_record *swap = out[b];
            out[b] = out[b - 1];
            out[b - 1] = swap;
        }
    return found;
}

/* Each hold is a record: who took it, when (its token), when it ended
 * and how; the last SCL_HISTORY_RECORDS of a name are kept, in order. */
START_TEST(test_history_keeps_the_last_holds)
{
    struct swerve_claim *c = swerve_claim_new("often");
    const struct scl_history_record *r[2 * SCL_HISTORY_RECORDS];
    uint64_t tokens[SCL_HISTORY_RECORDS + 3];
    struct scl_history_file *f;
    time_t now = (time_t)(wall_ns() / 1000000000);

    for (int i = 0; i < SCL_HISTORY_RECORDS + 3; i++) {
        ck_assert_ptr_eq(swerve_claim_acquire(c, 0.0), c);
        tokens[i] = swerve_claim_token(c);
        ck_assert_int_eq(swerve_claim_release(c), 0);
    }
    ck_assert_ptr_eq(swerve_claim_acquire(c, 0.0), c); /* one open, the oldest of the others dropped */
    f = read_history();
    ck_assert_int_eq(holds_of(f, "often", r, 2 * SCL_HISTORY_RECORDS), SCL_HISTORY_RECORDS);
    for (int i = 0; i < SCL_HISTORY_RECORDS - 1; i++) {
        ck_assert_int_eq((uint64_t)r[i]->taken, tokens[i + 4]);
        ck_assert_int_eq(r[i]->how, SCL_HOLD_RELEASED);
        ck_assert_int_ge(r[i]->ended, r[i]->taken);
        ck_assert_int_eq(r[i]->pid, getpid());
        ck_assert_int_le(llabs((long long)(scl_history_when(f, r[i]->ended) - now)), 2);
    }
    ck_assert_int_eq((uint64_t)r[SCL_HISTORY_RECORDS - 1]->taken, swerve_claim_token(c));
    ck_assert_int_eq(r[SCL_HISTORY_RECORDS - 1]->how, SCL_HOLD_HELD);
    ck_assert_int_eq(r[SCL_HISTORY_RECORDS - 1]->ended, 0);
    free(f);
    swerve_claim_free(c);
}
END_TEST

/* A dead holder's hold ends as its clearer saw it: its reaper knows the
 * signal or the exit status, an acquirer of the name only that it died;
 * one that could not write the history (not mapped) gets a record of its
 * own, with when it took the name and its command line, from its page of
 * times and its holder file, before they go. */
START_TEST(test_history_ends_a_dead_holders_holds)
{
    static const struct {
        int status_kind, code; /* 0 killed by the signal, 1 exited with the code, 2 left to an acquirer */
        int mapped;
        uint16_t how, detail;
    } cases[] = {
        { 0, SIGKILL, 1, SCL_HOLD_KILLED, SIGKILL },
        { 1, 3, 1, SCL_HOLD_ENDED, 3 },
        { 2, 0, 1, SCL_HOLD_CLEARED, 0 },
        { 0, SIGTERM, 0, SCL_HOLD_KILLED, SIGTERM },
    };
    struct swerve_claim *c = swerve_claim_new("died");
    const struct scl_history_record *r[SCL_HISTORY_RECORDS];
    struct scl_history_file *f;

    use_a_claim_first();
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int status, n;
        pid_t child = fork();
        if (child == 0) {
            if (!cases[k].mapped) /* as an image exec'd as another user: no history here */
                scl_history_map(-1, scl_dir_generation() + 1);
            if (swerve_claim_acquire(c, 0.0) != c)
                _exit(99);
            if (cases[k].status_kind == 0) {
                signal(cases[k].code, SIG_DFL); /* not Check's handler */
                raise(cases[k].code);
            }
            _exit(cases[k].code); /* no hooks here: the claim stays */
        }
        ck_assert_int_eq(waitpid(child, &status, 0), child);
        if (cases[k].status_kind == 2) {
            ck_assert_ptr_eq(swerve_claim_acquire(c, 0.0), c); /* clears the dead holder */
            ck_assert_int_eq(swerve_claim_release(c), 0);
        } else {
            scl_store()->child_reaped(child, status); /* as the reaping hook does */
        }
        f = read_history();
        n = holds_of(f, "died", r, SCL_HISTORY_RECORDS);
        ck_assert_int_ge(n, 1);
        if (cases[k].status_kind == 2) /* the acquirer's own hold came after */
            n--;
        ck_assert_int_eq(r[n - 1]->pid, child);
        ck_assert_int_eq(r[n - 1]->how, cases[k].how);
        ck_assert_int_eq(r[n - 1]->detail, cases[k].detail);
        ck_assert_int_gt(r[n - 1]->taken, 0);
        ck_assert_int_ge(r[n - 1]->ended, r[n - 1]->taken);
        ck_assert_int_ne(r[n - 1]->command[0], '\0');
        free(f);
    }
    swerve_claim_free(c);
}
END_TEST

/* A full table gives the slot of the name taken longest ago to a new
 * name, never one whose hold is open; with every slot's name held, a new
 * name goes unrecorded. */
START_TEST(test_history_full_table_gives_up_the_idlest)
{
    struct scl_history_file *f = calloc(1, sizeof *f);
    const struct scl_hold_end released = { f, SCL_HOLD_RELEASED, 0 };
    const struct scl_history_record *r[SCL_HISTORY_RECORDS];
    char fname[32];

    ck_assert_ptr_nonnull(f);
    f->magic = SCL_HISTORY_MAGIC;
    f->names = SCL_HISTORY_NAMES;
    f->realtime_offset = 1;
    for (int i = 0; i < SCL_HISTORY_NAMES; i++) {
        snprintf(fname, sizeof fname, "name-%d", i);
        scl_history_add(f, fname, 100 + i, scl_monotonic_ns(), "", &released);
    }
    /* name-0 is the idlest, but held: name-1 goes. */
    for (int s = 0; s < SCL_HISTORY_NAMES; s++)
        if (f->index[s].hash == scl_times_hash("name-0"))
            f->slots[s].records[1] = (struct scl_history_record){ .hash = f->index[s].hash, .how = SCL_HOLD_HELD };
    scl_history_add(f, "new", 7, scl_monotonic_ns(), "", &released);
    ck_assert_int_eq(holds_of(f, "new", r, SCL_HISTORY_RECORDS), 1);
    ck_assert_int_eq(holds_of(f, "name-1", r, SCL_HISTORY_RECORDS), 0);
    ck_assert_int_eq(holds_of(f, "name-0", r, SCL_HISTORY_RECORDS), 2);
    /* Every name held: the next new one has no room. */
    for (int s = 0; s < SCL_HISTORY_NAMES; s++)
        f->slots[s].records[0] = (struct scl_history_record){ .hash = f->index[s].hash, .how = SCL_HOLD_HELD };
    scl_history_add(f, "no-room", 8, scl_monotonic_ns(), "", &released);
    ck_assert_int_eq(holds_of(f, "no-room", r, SCL_HISTORY_RECORDS), 0);
    free(f);
}
END_TEST

/* What a worker may have written is checked before anything is shown: a
 * slot whose name is no encoded claim name of its hash, records of
 * another name, of no known end, with times before 1970 or that end
 * before they begin, and commands not NUL-terminated. */
START_TEST(test_history_parse_keeps_only_what_is_sound)
{
    struct scl_history_file *f = calloc(1, sizeof *f);
    struct scl_history_name *n;
    const int64_t t = 1000000000LL;

    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(scl_history_parse(f, sizeof *f), -1); /* no magic */
    ck_assert_int_eq(errno, EINVAL);
    f->magic = SCL_HISTORY_MAGIC;
    f->names = SCL_HISTORY_NAMES;
    ck_assert_int_eq(scl_history_parse(f, sizeof *f - 1), -1); /* short */
    f->names = SCL_HISTORY_NAMES + 1;
    ck_assert_int_eq(scl_history_parse(f, sizeof *f), -1); /* another layout */
    f->names = SCL_HISTORY_NAMES;
    f->realtime_offset = 1700000000LL * 1000000000LL;
    /* slot 0: sound, but for the records that are not */
    n = &f->slots[0];
    strcpy(n->fname, "good");
    n->len = 4;
    f->index[0].hash = scl_times_hash("good");
    n->records[0] = (struct scl_history_record){ f->index[0].hash, t, 2 * t, 42, SCL_HOLD_RELEASED, 0, "cmd" };
    n->records[1] = (struct scl_history_record){ f->index[0].hash, t, 0, 43, SCL_HOLD_HELD, 0, "" };
    memset(n->records[1].command, 'x', sizeof n->records[1].command); /* not terminated */
    n->records[2] = (struct scl_history_record){ f->index[0].hash + 1, t, 2 * t, 1, SCL_HOLD_RELEASED, 0, "" };
    n->records[3] = (struct scl_history_record){ f->index[0].hash, t, 2 * t, 1, SCL_HOLD_HOW_COUNT, 0, "" };
    n->records[4] = (struct scl_history_record){ f->index[0].hash, 2 * t, t, 1, SCL_HOLD_RELEASED, 0, "" };
    n->records[5] = (struct scl_history_record){ f->index[0].hash, t, 2 * t, 1, SCL_HOLD_HELD, 0, "" };
    n->records[6] = (struct scl_history_record){ f->index[0].hash, -t, t, 1, SCL_HOLD_RELEASED, 0, "" };
    n->records[7] = (struct scl_history_record){ f->index[0].hash, INT64_MAX, INT64_MAX, 1, SCL_HOLD_RELEASED, 0, "" };
    n->records[8] = (struct scl_history_record){ f->index[0].hash, 0, 2 * t, 44, SCL_HOLD_KILLED, 9, "" };
    n->records[9] = (struct scl_history_record){ f->index[0].hash, 0, 0, 1, SCL_HOLD_HELD, 0, "" };
    /* slots 1 to 4: names that are not what their hash says, or not names */
    strcpy(f->slots[1].fname, "other");
    f->slots[1].len = 5;
    f->index[1].hash = scl_times_hash("good");
    strcpy(f->slots[2].fname, "../x");
    f->slots[2].len = 4;
    f->index[2].hash = scl_times_hash("../x");
    memset(f->slots[3].fname, 'a', sizeof f->slots[3].fname);
    f->slots[3].len = SCL_FNAME_MAX;
    f->index[3].hash = 7;
    strcpy(f->slots[4].fname, "good");
    f->slots[4].len = 0;
    f->index[4].hash = scl_times_hash("good");
    for (int s = 1; s <= 4; s++)
        f->slots[s].records[0] = (struct scl_history_record){ f->index[s].hash, t, 2 * t, 1, SCL_HOLD_RELEASED, 0, "" };
    ck_assert_int_eq(scl_history_parse(f, sizeof *f), 0);
    ck_assert_uint_eq(f->index[0].hash, scl_times_hash("good"));
    ck_assert_int_eq(n->records[0].pid, 42);
    ck_assert_str_eq(n->records[0].command, "cmd");
    ck_assert_int_eq(n->records[1].pid, 43);
    ck_assert_uint_eq(strlen(n->records[1].command), sizeof n->records[1].command - 1);
    for (int i = 2; i <= 7; i++)
        ck_assert_msg(n->records[i].hash == 0, "record %d kept", i);
    ck_assert_int_eq(n->records[8].pid, 44); /* an end a clearer recorded, when it took the name unknown */
    ck_assert_uint_eq(n->records[9].hash, 0);
    for (int s = 1; s <= 4; s++) {
        ck_assert_msg(f->index[s].hash == 0, "slot %d kept", s);
        ck_assert_uint_eq(f->slots[s].records[0].hash, 0);
        ck_assert_uint_lt(strlen(f->slots[s].fname), SCL_FNAME_MAX);
    }
    ck_assert_int_eq(scl_history_when(f, INT64_MAX), 0);
    free(f);
}
END_TEST

/*
 * The check-then-unlink race of link-based locks: several processes find
 * the same stale claim at once.  Whichever takes the name first must keep
 * it: a second winner in a round means a fresh claim was removed.  The
 * winner holds on until every contender has tried (no hooks here: once it
 * ends, its claim is a dead holder's, free to a contender that the
 * machine's load made late).
 */
START_TEST(test_stale_clearing_is_race_free)
{
    enum { rounds = 150, contenders = 6 };
    int *winners = mmap(NULL, sizeof(int) * rounds * 2, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int *tried = winners + rounds;
    struct swerve_claim *c = swerve_claim_new("contended");

    ck_assert_ptr_ne(winners, MAP_FAILED);
    use_a_claim_first();
    for (int r = 0; r < rounds; r++) {
        int go[2];
        pid_t kids[contenders], dead = fork();
        if (dead == 0)
            _exit(swerve_claim_acquire(c, 0.0) == c ? 0 : 1); /* leaves a stale claim */
        ck_assert_int_eq(wait_exit_code(dead), 0);
        ck_assert(claim_file_exists("contended"));
        ck_assert_int_eq(pipe(go), 0);
        for (int k = 0; k < contenders; k++) {
            kids[k] = fork();
            if (kids[k] == 0) {
                char byte;
                close(go[1]);
                if (read(go[0], &byte, 1) < 0) /* closed: all start together */
                    _exit(1);
                if (swerve_claim_acquire(c, 0.0) == c) {
                    __atomic_add_fetch(&winners[r], 1, __ATOMIC_SEQ_CST);
                    __atomic_add_fetch(&tried[r], 1, __ATOMIC_SEQ_CST);
                    /* Hold while the others try (at most 10 s). */
                    for (int i = 0; i < 10000 && __atomic_load_n(&tried[r], __ATOMIC_SEQ_CST) < contenders; i++)
                        usleep(1000);
                } else {
                    __atomic_add_fetch(&tried[r], 1, __ATOMIC_SEQ_CST);
                }
                _exit(0);
            }
        }
        close(go[0]);
        close(go[1]); /* EOF releases them all at once */
        for (int k = 0; k < contenders; k++)
            ck_assert_int_eq(wait_exit_code(kids[k]), 0);
        ck_assert_msg(winners[r] == 1, "round %d: %d holders at once", r, winners[r]);
    }
    ck_assert_int_eq(testdir_count(testdir_base), 1);
    swerve_claim_free(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("unit");
    TCase *names = tcase_create("names"), *proc = tcase_create("proc"), *api = tcase_create("api");
    TCase *strings = tcase_create("strings"), *settings = tcase_create("settings"), *why = tcase_create("why");

    tcase_add_test(names, test_names_plain_stay_readable);
    tcase_add_test(names, test_names_unsafe_bytes_are_escaped);
    tcase_set_timeout(names, 30);
    tcase_add_test(names, test_names_round_trip_and_injective);
    tcase_add_test(names, test_names_long_are_hashed_and_distinct);
    tcase_add_test(names, test_names_short_never_contain_hash_marker);
    tcase_add_test(names, test_names_only_canonical_file_names_decode);
    tcase_add_test(names, test_names_what_a_journal_may_name);
    tcase_add_test(names, test_holder_header_pids_in_range);
    tcase_add_test(names, test_holder_named_for_another_pid_is_taken_out);
    tcase_add_test(names, test_journal_reader_takes_names_only);
    tcase_add_test(names, test_sha256_vectors);
    suite_add_tcase(s, names);

    tcase_add_test(proc, test_proc_parse_odd_command_names);
    tcase_add_test(proc, test_proc_liveness);
    tcase_add_test(proc, test_proc_unit_from_cgroup);
    tcase_add_test(proc, test_proc_cmdline);
    tcase_add_test(proc, test_proc_tracer);
    tcase_add_test(proc, test_proc_uids);
    suite_add_tcase(s, proc);

    tcase_add_test(strings, test_concat_fits_or_says_so);
    tcase_add_test(strings, test_prefix_and_contains);
    tcase_add_test(strings, test_unlink_if_same_leaves_a_replacement);
    suite_add_tcase(s, strings);

    tcase_add_test(settings, test_settings_defaults);
    tcase_add_test(settings, test_settings_from_the_environment);
    tcase_add_test(settings, test_settings_relative_and_read_once);
    tcase_add_test(settings, test_settings_too_long_is_an_error);
    suite_add_tcase(s, settings);

    tcase_add_checked_fixture(api, testdir_setup, testdir_teardown);
    tcase_set_timeout(api, 60);
    tcase_add_test(api, test_nothing_on_disk_until_used);
    tcase_add_test(api, test_journal_only_into_own_holder);
    tcase_add_test(api, test_wake_file_with_two_names_is_not_mapped);
    tcase_add_test(api, test_turns_are_one_names);
    tcase_add_test(api, test_named_directory_open_to_others_is_eperm);
    tcase_add_test(api, test_path_like_names_stay_inside);
    tcase_add_test(api, test_directory_is_private);
    tcase_add_test(api, test_journal_records_each_name_once);
    tcase_add_test(api, test_dead_holder_counts_as_free);
    tcase_add_test(api, test_cloned_child_is_not_its_parent);
    tcase_add_test(api, test_released_claim_is_free_at_once);
    tcase_add_loop_test(api, test_ended_holder_is_free_within_the_retry_period, 0, 2);
    tcase_add_test(api, test_stale_clearing_is_race_free);
    tcase_add_test(api, test_times_are_per_claim);
    tcase_add_test(api, test_mapped_files_have_no_holes);
    tcase_add_test(api, test_times_page_is_each_process_own);
    tcase_add_test(api, test_left_page_does_not_keep_the_directory);
    tcase_add_test(api, test_history_keeps_the_last_holds);
    tcase_add_test(api, test_history_ends_a_dead_holders_holds);
    tcase_add_test(api, test_history_full_table_gives_up_the_idlest);
    tcase_add_test(api, test_history_parse_keeps_only_what_is_sound);
    suite_add_tcase(s, api);
    tcase_add_test(why, test_why_names_the_missing_base);
    tcase_add_test(why, test_why_of_a_name);
    tcase_add_test(why, test_why_formats_every_conversion_it_is_given);
    tcase_add_test(why, test_why_is_each_threads_own);
    suite_add_tcase(s, why);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
