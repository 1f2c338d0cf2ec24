// SPDX-License-Identifier: BSD-2-Clause
/*
 * split7030 [SECONDS [ROUNDS]]: burn CPU with a known split: 70% of the work
 * in main;hot;spin and 30% in main;cold;spin.  The split is by work (loop
 * iterations), so it holds whatever the machine's speed.  With ROUNDS, do
 * exactly that much work instead (for measuring a profiler's slowdown).
 */
#include "common.h"

static volatile uint64_t sink;

WL_FN void spin(uint64_t n)
{
	volatile uint64_t x = 0;

	for (uint64_t i = 0; i < n; i++)
		x += i * i;
	sink += x;
}

WL_FN void hot(void)
{
	volatile int frame = 0;

	spin(700000);
	(void)frame;
}

WL_FN void cold(void)
{
	volatile int frame = 0;

	spin(300000);
	(void)frame;
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv, 3);
	long rounds = argc > 2 ? atol(argv[2]) : -1;

	if (rounds >= 0) {
		while (rounds-- > 0) {
			hot();
			cold();
		}
		return 0;
	}
	while (wl_now() < end) {
		hot();
		cold();
	}
	return 0;
}
