/* SPDX-License-Identifier: MIT */
/*
 * Where the state lives that every process loading the library touches:
 * at load, at exit, at each fork and reap.
 *
 * The first touch of a .bss page costs a page fault, two when it is read
 * before it is written (the zero page, then a copy): microseconds each on
 * a VM, in an exec'd helper that may live less than a millisecond.  The
 * dynamic loader writes the pages of a small .data anyway (it relocates
 * the GOT just before it and zeroes the start of .bss just after it), so
 * state kept there costs no fault of its own.  The start of .bss shares
 * that page as long as nothing in .bss is aligned to more than a cache
 * line: there sits crtstuff's completed.0, which exit() reads then writes
 * (tests/packaging/layout.sh checks it).
 */
#ifndef SCL_HOT_H
#define SCL_HOT_H

#define SCL_HOT __attribute__((section(".data.scl_hot")))

#endif
