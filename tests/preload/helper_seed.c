/* SPDX-License-Identifier: MIT */
/*
 * The examples of the Swerve claim pages (the guide and the Claim class
 * reference), translated to C over the dlsym loader.  Each prints what the
 * seed prints.  The guide's phasync coroutines become worker processes, as
 * in a prefork server; the class example's two handles stay in one
 * process, as in the seed.  Examples 2 and 3 of the class page print
 * nothing in the seed; here they say what they did, so a test can check.
 *
 * usage: helper_seed guide-claims|guide-waiting|guide-releasing|
 *                    class-1|class-2|class-3
 */
#include <swerve/claim-loader.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static struct swerve_claim_api api;

static void sleep_s(double s)
{
    usleep((useconds_t)(s * 1e6));
}

static const char *bool_dump(int v)
{
    return v ? "bool(true)" : "bool(false)";
}

static const char *export_bool(int v)
{
    return v ? "true" : "false";
}

static pid_t spawn(void (*body)(void *), void *arg)
{
    pid_t pid;

    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        body(arg);
        exit(0);
    }
    return pid;
}

static void reap(pid_t pid)
{
    int status;

    while (waitpid(pid, &status, 0) < 0)
        ;
}

/* ---- guide, "Claims": three workers race for the nightly report. */

struct racer {
    const char *who;
    int ready[2], finish[2];
};

static void racer(void *arg)
{
    struct racer *r = arg;
    char byte = 0;
    SWERVE_CLAIM_AUTO struct swerve_claim *claim = api.new_claim("nightly-report");

    if (api.acquire(claim, 0.0)) {
        printf("%s runs the report\n", r->who);
        fflush(stdout);
        if (write(r->ready[1], &byte, 1) != 1 || read(r->finish[0], &byte, 1) != 1) /* phasync::sleep(0.1) */
            exit(1);
    } else {
        printf("%s: someone else is on it\n", r->who);
    }
} /* claim is released when it goes out of scope */

static void guide_claims(void)
{
    struct racer r[3] = { { .who = "a" }, { .who = "b" }, { .who = "c" } };
    pid_t pids[3];
    char byte = 0;

    if (pipe(r[0].ready) != 0 || pipe(r[0].finish) != 0)
        exit(1);
    pids[0] = spawn(racer, &r[0]);
    if (read(r[0].ready[0], &byte, 1) != 1) /* a holds it while b and c try */
        exit(1);
    for (int i = 1; i < 3; i++) {
        r[i].ready[1] = r[i].finish[0] = -1;
        pids[i] = spawn(racer, &r[i]);
        reap(pids[i]);
    }
    if (write(r[0].finish[1], &byte, 1) != 1)
        exit(1);
    reap(pids[0]);

    SWERVE_CLAIM_AUTO struct swerve_claim *check = api.new_claim("nightly-report");
    printf(api.available(check) ? "free again\n" : "still held\n");
}

/* ---- guide, "Waiting for it". */

static void second(void *arg)
{
    (void)arg;
    printf("second: waiting\n");
    fflush(stdout);
    SWERVE_CLAIM_AUTO struct swerve_claim *claim = api.new_claim("import");
    if (api.acquire(claim, 5.0)) /* tries every 20 ms */
        printf("second: importing\n");
}

static void guide_waiting(void)
{
    pid_t pid;

    {
        SWERVE_CLAIM_AUTO struct swerve_claim *claim = api.acquire(api.new_claim("import"), 0.0);
        printf("first: importing\n");
        pid = spawn(second, NULL);
        sleep_s(0.2);
        printf("first: done\n");
        fflush(stdout);
    } /* released as claim goes */
    reap(pid);
}

/* ---- guide, "Releasing". */

static void guide_releasing(void)
{
    SWERVE_CLAIM_AUTO struct swerve_claim *claim = api.new_claim("leader");

    api.acquire(claim, 0.0);
    printf("held: %s\n", export_bool(api.held(claim)));
    api.release(claim); /* give it up while the handle lives on */
    printf("held: %s\n", export_bool(api.held(claim)));
    printf("available: %s\n", export_bool(api.available(claim)));
    api.release(claim); /* releasing what is not held does nothing */
}

/* ---- class reference, Example 1: two handles on one name. */

static void class_1(void)
{
    SWERVE_CLAIM_AUTO struct swerve_claim *mine = api.new_claim("import");
    SWERVE_CLAIM_AUTO struct swerve_claim *yours = api.new_claim("import");

    printf("%s\n", bool_dump(api.available(mine)));
    printf("%s\n", bool_dump(api.acquire(mine, 0.0) == mine));
    printf("%s\n", api.acquire(yours, 0.0) == NULL ? "NULL" : "handle");
    printf("%s\n%s\n", bool_dump(api.held(mine)), bool_dump(api.held(yours)));
    api.release(mine);
    printf("%s\n", bool_dump(api.acquire(yours, 0.0) == yours));
}

/* ---- class reference, Example 2. */

static void class_2(void)
{
    {
        SWERVE_CLAIM_AUTO struct swerve_claim *claim = api.acquire(api.new_claim("nightly-report"), 0.0);
        if (claim)
            printf("report ran\n");
    } /* released when claim goes out of scope */
    SWERVE_CLAIM_AUTO struct swerve_claim *check = api.new_claim("nightly-report");
    printf("released: %s\n", export_bool(api.available(check)));
}

/* ---- class reference, Example 3. */

static void class_3(void)
{
    SWERVE_CLAIM_AUTO struct swerve_claim *claim = api.new_claim("import");

    if (api.acquire(claim, 5.0)) { /* tries every 20 ms for up to 5 s */
        printf("import_feed ran\n");
        api.release(claim);
    }
    printf("held: %s\n", export_bool(api.held(claim)));
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*run)(void);
    } examples[] = {
        { "guide-claims", guide_claims },
        { "guide-waiting", guide_waiting },
        { "guide-releasing", guide_releasing },
        { "class-1", class_1 },
        { "class-2", class_2 },
        { "class-3", class_3 },
    };

    if (!swerve_claim_load(&api)) {
        fprintf(stderr, "helper_seed: libswerveclaim_preload.so is not loaded\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (size_t i = 0; argc == 2 && i < sizeof examples / sizeof examples[0]; i++) {
        if (strcmp(argv[1], examples[i].name) == 0) {
            examples[i].run();
            return 0;
        }
    }
    fprintf(stderr, "usage: helper_seed EXAMPLE\n");
    return 2;
}
