// SPDX-License-Identifier: BSD-2-Clause
/*
 * leaves [SECONDS]: several leaf functions with different shares of the work,
 * for comparing fg's profile with perf's: leaf_a 40%, leaf_b 25%, leaf_c 20%,
 * leaf_d 10%, leaf_e 5%.  One round takes about 10 ms, long beside the
 * sampling period, so that a periodic sampler does not alias with it.
 */
#include "common.h"

static volatile uint64_t sink;

#define LEAF(name)                                                                                 \
	WL_FN void name(uint64_t n)                                                                \
	{                                                                                          \
		volatile uint64_t x = 0;                                                           \
		for (uint64_t i = 0; i < n; i++)                                                   \
			x += i ^ (x >> 3);                                                         \
		sink += x;                                                                         \
	}

LEAF(leaf_a)
LEAF(leaf_b)
LEAF(leaf_c)
LEAF(leaf_d)
LEAF(leaf_e)

WL_FN void work(void)
{
	volatile int frame = 0;

	leaf_a(8000000);
	leaf_b(5000000);
	leaf_c(4000000);
	leaf_d(2000000);
	leaf_e(1000000);
	(void)frame;
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv, 3);

	while (wl_now() < end)
		work();
	return 0;
}
