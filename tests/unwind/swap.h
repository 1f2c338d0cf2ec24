/* SPDX-License-Identifier: BSD-2-Clause */
/* The swap fixtures (tests/unwind/swap.c, swap-run.c, swap-dl.c). */
#ifndef SWAP_H
#define SWAP_H
#include <sched.h>
#include <time.h>

/* tests/unwind/swap.S: spins n times in swap_hot, called from swap_mid */
void swap_mid(unsigned long n);
/* about a tenth of a millisecond of spinning */
#define SWAP_SPINS 100000ul

/* this process, and those it starts, on the first CPU it may use: 0, else -1 */
static inline int swap_pin(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set)) {
			CPU_ZERO(&set);
			CPU_SET(c, &set);
			return sched_setaffinity(0, sizeof(set), &set);
		}
	return -1;
}

static inline double swap_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}
#endif
