/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "testdir.h"

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *testdir_make(void)
{
    const char *tmp = getenv("TMPDIR");
    char *path;

    if (asprintf(&path, "%s/scl-test.XXXXXX", tmp != NULL && *tmp != '\0' ? tmp : "/tmp") < 0)
        abort();
    if (mkdtemp(path) == NULL)
        abort();
    return path;
}

int testdir_count_prefix(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
            strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            n++;
    closedir(d);
    return n;
}

int testdir_count(const char *dir)
{
    return testdir_count_prefix(dir, "");
}

char *testdir_claim_dir(const char *base)
{
    DIR *d = opendir(base);
    struct dirent *e;
    char *found = NULL;

    if (d == NULL)
        return NULL;
    /* A server's directory: not one being built aside (".new"), nor a
     * history kept beside one (".history"), whatever readdir's order. */
    while (found == NULL && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, "swerve-claim.", 13) != 0 || (len > 4 && strcmp(e->d_name + len - 4, ".new") == 0) ||
            (len > 8 && strcmp(e->d_name + len - 8, ".history") == 0))
            continue;
        if (asprintf(&found, "%s/%s", base, e->d_name) < 0)
            abort();
    }
    closedir(d);
    return found;
}

int testdir_claim_exists(const char *base, const char *name)
{
    char *dir = testdir_claim_dir(base), *path;
    struct stat st;
    int exists;

    if (dir == NULL)
        return -1;
    if (asprintf(&path, "%s/claims/%s", dir, name) < 0)
        abort();
    exists = lstat(path, &st) == 0;
    free(path);
    free(dir);
    return exists;
}

char *testdir_base;

void testdir_setup(void)
{
    testdir_base = testdir_make();
    if (setenv("SWERVE_TMPDIR", testdir_base, 1) != 0)
        abort();
}

void testdir_teardown(void)
{
    testdir_remove(testdir_base);
    testdir_base = NULL;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void testdir_remove(char *dir)
{
    if (dir == NULL)
        return;
    (void)nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}
