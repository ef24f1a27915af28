/* SPDX-License-Identifier: MIT */
/*
 * swerve-claim-preload [--library PATH] [--] COMMAND [ARG...] - run COMMAND with the claim shim
 * preloaded, as eatmydata does: the library goes in front of an existing
 * LD_PRELOAD, and COMMAND's exit status is ours (it replaces us).  Says
 * so when the loader will ignore LD_PRELOAD for COMMAND (static or
 * setuid/setgid programs).  The manual is doc/swerve-claim-preload.1.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LIBRARY     "libswerveclaim_preload.so"
#define LIBRARY_ENV "SWERVE_CLAIM_PRELOAD_LIBRARY"
/* The launcher itself failed, as env(1) and timeout(1) say it. */
#define LAUNCHER_FAILED 125

static void usage(FILE *to)
{
    fprintf(to,
            "Usage: swerve-claim-preload [--library PATH] [--] COMMAND [ARG...]\n"
            "       swerve-claim-preload [--library PATH] --print-library\n"
            "\n"
            "Runs COMMAND with %s preloaded (in front of any LD_PRELOAD\n"
            "already set), so that an unmodified server gets named cross-process claims.\n"
            "\n"
            "  -l, --library PATH  the library to preload (default: $%s, else the one\n"
            "                      next to this program in a build tree, else %s)\n"
            "  -p, --print-library print the library it would preload, for a config file\n"
            "                      (a unit's Environment=LD_PRELOAD=...), and exit\n"
            "  -h, --help          this help\n"
            "  -V, --version       the version\n"
            "\n"
            "Exit status: COMMAND's; 125 if the library is not found; 126 if COMMAND\n"
            "cannot run; 127 if it is not found.\n",
            LIBRARY, LIBRARY_ENV, SCL_LIBDIR);
}

/* The library next to us in a build tree, else the installed one. */
static int find_library(char *out, size_t cap)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    char *slash;

    if (n > 0) {
        self[n] = '\0';
        slash = strrchr(self, '/');
        if (slash != NULL) {
            snprintf(out, cap, "%.*s/.libs/" LIBRARY, (int)(slash - self), self);
            if (access(out, R_OK) == 0)
                return 0;
        }
    }
    snprintf(out, cap, "%s/" LIBRARY, SCL_LIBDIR);
    return access(out, R_OK);
}

/* COMMAND's file, as execvp would find it; "" when not found. */
static void resolve(const char *command, char *out, size_t cap)
{
    const char *path = getenv("PATH");

    out[0] = '\0';
    if (strchr(command, '/') != NULL) {
        snprintf(out, cap, "%s", command);
        return;
    }
    for (const char *p = path != NULL ? path : "/usr/bin:/bin"; *p != '\0';) {
        size_t len = strcspn(p, ":");
        snprintf(out, cap, "%.*s/%s", (int)len, len ? p : ".", command);
        if (access(out, X_OK) == 0)
            return;
        p += len + (p[len] == ':');
    }
    out[0] = '\0';
}

/* 1 when FILE is an ELF program with no interpreter: a static one. */
static int is_static_elf(const char *file)
{
    Elf64_Ehdr eh;
    int fd = open(file, O_RDONLY | O_CLOEXEC), is_static = 0;

    if (fd < 0)
        return 0;
    if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
        eh.e_ident[EI_CLASS] == ELFCLASS64 && (eh.e_type == ET_EXEC || eh.e_type == ET_DYN)) {
        is_static = 1;
        for (int i = 0; i < eh.e_phnum; i++) {
            Elf64_Phdr ph;
            if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (Elf64_Off)i * eh.e_phentsize)) != (ssize_t)sizeof ph)
                break;
            if (ph.p_type == PT_INTERP)
                is_static = 0;
        }
    }
    close(fd);
    return is_static;
}

/* The library to preload, made absolute (the loader would read a
 * relative one from each program's cwd) into LIBRARY (PATH_MAX bytes):
 * CHOSEN (--library or the environment), else the one found.  0, or -1
 * (said). */
static int choose_library(const char *chosen, char *library)
{
    if (chosen != NULL && *chosen != '\0') {
        if (realpath(chosen, library) == NULL || access(library, R_OK) != 0) {
            fprintf(stderr, "swerve-claim-preload: %s: %s\n", chosen, strerror(errno));
            return -1;
        }
    } else if (find_library(library, PATH_MAX) != 0) {
        fprintf(stderr,
                "swerve-claim-preload: %s not found (looked beside this program and in %s); "
                "point at it with --library PATH or %s=PATH\n",
                LIBRARY, SCL_LIBDIR, LIBRARY_ENV);
        return -1;
    }
    return 0;
}

/* Warns when the loader will not preload anything into COMMAND. */
static void warn_if_not_preloaded(const char *command)
{
    char target[PATH_MAX];
    struct stat st;

    resolve(command, target, sizeof target);
    if (target[0] == '\0' || stat(target, &st) != 0)
        return;
    if (st.st_mode & (S_ISUID | S_ISGID))
        fprintf(stderr,
                "swerve-claim-preload: warning: %s is setuid/setgid: the dynamic loader ignores "
                "LD_PRELOAD for it, so it will run without claims\n",
                target);
    else if (is_static_elf(target))
        fprintf(stderr,
                "swerve-claim-preload: warning: %s is statically linked: LD_PRELOAD does not "
                "apply to it, so it will run without claims\n",
                target);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "library", required_argument, NULL, 'l' },
        { "print-library", no_argument, NULL, 'p' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    char library[PATH_MAX], *preload;
    const char *old, *chosen = getenv(LIBRARY_ENV);
    int c, print = 0;

    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:l:phV", opts, NULL)) != -1) {
        switch (c) {
        case 'l': chosen = optarg; break;
        case 'p': print = 1; break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("swerve-claim-preload %s\n", PACKAGE_VERSION); return 0;
        case ':': fprintf(stderr, "swerve-claim-preload: option '%s' needs an argument\n", argv[optind - 1]); return 2;
        default:
            fprintf(stderr, "swerve-claim-preload: unknown option '%s' (try --help)\n", argv[optind - 1]);
            return 2;
        }
    }
    if (print ? optind != argc : optind >= argc) {
        usage(stderr);
        return 2;
    }
    argv += optind - 1; /* argv[1] is COMMAND from here on */
    if (choose_library(chosen, library) != 0)
        return LAUNCHER_FAILED;
    if (print)
        return puts(library) >= 0 && fflush(stdout) == 0 ? 0 : LAUNCHER_FAILED;
    old = getenv("LD_PRELOAD");
    if (old != NULL && *old != '\0' && strstr(old, library) == NULL) {
        preload = malloc(strlen(library) + strlen(old) + 2);
        if (preload == NULL)
            return 126;
        sprintf(preload, "%s:%s", library, old);
    } else {
        preload = old != NULL && *old != '\0' ? (char *)old : library;
    }
    warn_if_not_preloaded(argv[1]);
    if (setenv("LD_PRELOAD", preload, 1) != 0) {
        perror("swerve-claim-preload: setenv");
        return 126;
    }
    execvp(argv[1], argv + 1);
    fprintf(stderr, "swerve-claim-preload: %s: %s\n", argv[1], strerror(errno));
    return errno == ENOENT ? 127 : 126;
}
