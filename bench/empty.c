/* SPDX-License-Identifier: MIT */
/* An empty library, preloaded as a baseline: what LD_PRELOAD of any
 * library costs a forking process, before the shim's hooks do anything. */
void bench_empty_preload(void);

void bench_empty_preload(void)
{
}
