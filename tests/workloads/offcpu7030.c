// SPDX-License-Identifier: BSD-2-Clause
/*
 * offcpu7030 [-g] [ROUNDS [LONG_MS [SHORT_MS]]]: block with a known split.
 * Each round sleeps LONG_MS (default 7) in main;wait_long, then SHORT_MS
 * (default 3) in main;wait_short: 70% and 30% of the time it waits, for
 * ROUNDS rounds (default 100).  Each function makes its clock_nanosleep
 * system call itself (WL_SLEEP_NS, an inlined syscall instruction), so the
 * user stack of the blocked thread starts in it.  At the end it prints the
 * time each function spent in its system calls, measured with
 * clock_gettime around each: "wait_long NS" and "wait_short NS".
 *
 * -g: wait for a line on standard input before the first round (so that
 * profilers attach first), and for the end of standard input after printing
 * (so that a profiler that names frames from /proc when it ends still finds
 * the process).  Those waits are in main;gate.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

static uint64_t long_ns, short_ns;

WL_FN void wait_long(uint64_t ns)
{
	uint64_t t0 = wl_now_ns();

	if (WL_SLEEP_NS(ns) != 0)
		exit(1);
	long_ns += wl_now_ns() - t0;
}

WL_FN void wait_short(uint64_t ns)
{
	uint64_t t0 = wl_now_ns();

	if (WL_SLEEP_NS(ns) != 0)
		exit(1);
	short_ns += wl_now_ns() - t0;
}

/* a line, or with `to_end` everything up to the end of standard input */
WL_FN void gate(int to_end)
{
	char c;

	while (read(STDIN_FILENO, &c, 1) == 1)
		if (!to_end && c == '\n')
			break;
}

int main(int argc, char **argv)
{
	int gated = argc > 1 && strcmp(argv[1], "-g") == 0;
	char **a = argv + gated;
	int n = argc - gated;
	long rounds = n > 1 ? atol(a[1]) : 100;
	uint64_t lms = n > 2 ? strtoull(a[2], NULL, 10) : 7;
	uint64_t sms = n > 3 ? strtoull(a[3], NULL, 10) : 3;

	if (gated)
		gate(0);
	for (long i = 0; i < rounds; i++) {
		wait_long(lms * 1000000);
		wait_short(sms * 1000000);
	}
	printf("wait_long %llu\nwait_short %llu\n", (unsigned long long)long_ns,
	       (unsigned long long)short_ns);
	fflush(stdout);
	if (gated)
		gate(1);
	return 0;
}
