/* Seconds on the monotonic clock, for the tests' bounds and timings. */
#ifndef SCL_TESTS_CLOCK_H
#define SCL_TESTS_CLOCK_H

#include <time.h>

__attribute__((unused)) static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif
