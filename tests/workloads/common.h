/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Shared bits of the test workloads.  Every function a test expects in a
 * stack keeps a frame of its own: a volatile local defeats gcc's habit of
 * omitting the frame of a small leaf (which would make a frame-pointer walk
 * skip its caller), and noinline keeps the function itself.
 */
#ifndef FG_WORKLOAD_H
#define FG_WORKLOAD_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define WL_FN __attribute__((noinline, used))

static inline double wl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Seconds to run: the first argument, else `def`. */
static inline double wl_seconds(int argc, char **argv, double def)
{
	return argc > 1 ? atof(argv[1]) : def;
}

#endif
