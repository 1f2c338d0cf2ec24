// SPDX-License-Identifier: BSD-2-Clause
/*
 * recurse [SECONDS] [DEPTH]: main;recurse;recurse;...;spin_leaf, DEPTH levels
 * of recursion (default 10), for checking that deep and repeated frames come
 * out whole.
 */
#include "common.h"

static volatile uint64_t sink;

WL_FN void spin_leaf(void)
{
	volatile uint64_t x = 0;

	for (uint64_t i = 0; i < 200000; i++)
		x += i;
	sink += x;
}

WL_FN void recurse(int depth)
{
	volatile int frame = depth;

	if (depth > 1)
		recurse(depth - 1);
	else
		spin_leaf();
	(void)frame;
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv, 3);
	int depth = argc > 2 ? atoi(argv[2]) : 10;

	while (wl_now() < end)
		recurse(depth);
	return 0;
}
