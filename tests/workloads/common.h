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
 * Sleep `ns` nanoseconds (CLOCK_MONOTONIC) through a system call made right
 * here, by a syscall instruction inlined into the calling function: a
 * profiler that takes the stack of a thread blocked in the kernel then finds
 * the caller itself at the top of the user stack, with its frame pointer,
 * rather than a libc wrapper built without one (which hides its caller).
 * A macro, so that it is inlined even with -fno-inline.  Returns the
 * system call's result (0, or -errno).
 */
#if defined(__x86_64__)
#define WL_SLEEP_NS(ns)                                                                            \
	({                                                                                         \
		struct timespec wl_ts_ = {(time_t)((ns) / 1000000000), (long)((ns) % 1000000000)}; \
		register long wl_r10_ __asm__("r10") = 0;                                          \
		long wl_ret_ = 230; /* SYS_clock_nanosleep */                                      \
		__asm__ volatile("syscall"                                                         \
				 : "+a"(wl_ret_)                                                   \
				 : "D"((long)CLOCK_MONOTONIC), "S"(0L), "d"(&wl_ts_), "r"(wl_r10_) \
				 : "rcx", "r11", "memory");                                        \
		wl_ret_;                                                                           \
	})
#elif defined(__aarch64__)
#define WL_SLEEP_NS(ns)                                                                            \
	({                                                                                         \
		struct timespec wl_ts_ = {(time_t)((ns) / 1000000000), (long)((ns) % 1000000000)}; \
		register long wl_x0_ __asm__("x0") = CLOCK_MONOTONIC;                              \
		register long wl_x1_ __asm__("x1") = 0;                                            \
		register long wl_x2_ __asm__("x2") = (long)&wl_ts_;                                \
		register long wl_x3_ __asm__("x3") = 0;                                            \
		register long wl_x8_ __asm__("x8") = 115; /* SYS_clock_nanosleep */                \
		__asm__ volatile("svc #0"                                                          \
				 : "+r"(wl_x0_)                                                    \
				 : "r"(wl_x1_), "r"(wl_x2_), "r"(wl_x3_), "r"(wl_x8_)              \
				 : "memory");                                                      \
		wl_x0_;                                                                            \
	})
#else
#error "WL_SLEEP_NS: no inline system call for this architecture"
#endif

/* The monotonic clock in nanoseconds. */
static inline uint64_t wl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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
