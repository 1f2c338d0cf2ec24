// SPDX-License-Identifier: BSD-2-Clause
/*
 * halfsleep [ROUNDS [MS]]: half on the CPU, half asleep.  Each round burns
 * MS milliseconds of the thread's own CPU time (CLOCK_THREAD_CPUTIME_ID, so
 * time it spends preempted does not count) in main;compute;burn, then
 * sleeps MS milliseconds in main;rest (an inlined clock_nanosleep system
 * call, WL_SLEEP_NS).  Defaults: 20 rounds of 50 ms.  At the end it prints
 * what it measured: "cpu NS" (CPU time in compute), "sleep NS" (time in
 * rest's system calls) and "wall NS" (the whole loop).
 */
#include <stdio.h>

#include "common.h"

static volatile uint64_t sink;

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

WL_FN void burn(void)
{
	volatile uint64_t x = 0;

	for (int i = 0; i < 20000; i++)
		x += (uint64_t)i * (uint64_t)i;
	sink += x;
}

WL_FN uint64_t compute(uint64_t ns)
{
	uint64_t t0 = thread_cpu_ns(), t;

	while ((t = thread_cpu_ns()) - t0 < ns)
		burn();
	return t - t0;
}

WL_FN uint64_t rest(uint64_t ns)
{
	uint64_t t0 = wl_now_ns();

	if (WL_SLEEP_NS(ns) != 0)
		exit(1);
	return wl_now_ns() - t0;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 20;
	uint64_t ns = (argc > 2 ? strtoull(argv[2], NULL, 10) : 50) * 1000000;
	uint64_t cpu = 0, slept = 0, t0 = wl_now_ns();

	for (long i = 0; i < rounds; i++) {
		cpu += compute(ns);
		slept += rest(ns);
	}
	printf("cpu %llu\nsleep %llu\nwall %llu\n", (unsigned long long)cpu,
	       (unsigned long long)slept, (unsigned long long)(wl_now_ns() - t0));
	return 0;
}
