/* SPDX-License-Identifier: MIT */
/*
 * The tests' and benchmarks' clocks: seconds on the monotonic clock for
 * bounds and timings, and the wall clock in nanoseconds for a timestamp a
 * shell script compares with its now_ns() (tests/lib/check.sh).
 */
#ifndef SCL_TESTS_CLOCK_H
#define SCL_TESTS_CLOCK_H

#include <time.h>

__attribute__((unused)) static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((unused)) static long long wall_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#endif
