// SPDX-License-Identifier: BSD-2-Clause
/*
 * pingpong [ROUNDS]: two threads pass one byte back and forth over two
 * pipes ROUNDS times (default 100000): every pass is a wakeup and two
 * context switches, so it measures what a profiler that runs on each
 * context switch costs.  Prints "rounds N" and "ns N" (the loop's time).
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "common.h"

static int ping[2], pong[2];
static long rounds = 100000;

WL_FN void *ponger(void *arg)
{
	char c;

	(void)arg;
	for (long i = 0; i < rounds; i++)
		if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1)
			exit(1);
	return NULL;
}

WL_FN void pinger(void)
{
	char c = 'x';

	for (long i = 0; i < rounds; i++)
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			exit(1);
}

int main(int argc, char **argv)
{
	pthread_t t;
	uint64_t t0;

	if (argc > 1)
		rounds = atol(argv[1]);
	if (pipe(ping) < 0 || pipe(pong) < 0 || pthread_create(&t, NULL, ponger, NULL) != 0)
		return 1;
	t0 = wl_now_ns();
	pinger();
	pthread_join(t, NULL);
	printf("rounds %ld\nns %llu\n", rounds, (unsigned long long)(wl_now_ns() - t0));
	return 0;
}
