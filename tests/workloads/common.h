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

/*
 * A system call made by the instruction itself, inlined into the calling
 * function: no libc wrapper (built without frame pointers) stands between
 * the kernel and the caller, so a frame-pointer walk from the system call
 * finds the caller's frame.
 */
static inline __attribute__((always_inline)) long wl_syscall3(long nr, long a, long b, long c)
{
	long ret;
#if defined(__x86_64__)
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
	ret = x0;
#else
#error "wl_syscall3: x86-64 and arm64 only"
#endif
	return ret;
}

#endif
