// SPDX-License-Identifier: BSD-2-Clause
/*
 * calls [N]: call target() exactly N times (default 10000), 70% of them
 * from site_a() and 30% from site_b(), then exit: a probe on target with a
 * sample on each call sees N calls, split 7:3 by caller.  The benchmark of
 * uprobes calls it with a large N.
 */
#include "common.h"

static volatile long sink;

WL_FN long target(long x)
{
	volatile long v = x;

	return v + 1;
}

WL_FN void site_a(long n)
{
	for (long i = 0; i < n; i++)
		sink += target(i);
}

WL_FN void site_b(long n)
{
	for (long i = 0; i < n; i++)
		sink += target(i);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000, a = n / 10 * 7;

	if (n < 0)
		return 1;
	site_a(a);
	site_b(n - a);
	return 0;
}
