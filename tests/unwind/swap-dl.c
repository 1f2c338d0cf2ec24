// SPDX-License-Identifier: BSD-2-Clause
/*
 * swap-dl MS ROUNDS LIB...: the swap code (tests/unwind/swap.S) as shared
 * libraries, one after the other in one process on one CPU: round r opens
 * LIB[r % n], spins MS milliseconds in its swap_hot, closes it.  Each
 * library must be mapped where the first one was (the same pcs, other
 * rules): exit 3, saying so, when one is not.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "swap.h"

__attribute__((noinline)) static void run(void (*mid)(unsigned long), double ms)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		mid(SWAP_SPINS);
	while (swap_ms(&t0) < ms);
	__asm__ volatile(""); /* not a tail call */
}

int main(int argc, char **argv)
{
	uintptr_t first = 0;
	double ms;
	int rounds;

	if (argc < 4) {
		fprintf(stderr, "usage: swap-dl MS ROUNDS LIB...\n");
		return 2;
	}
	ms = atof(argv[1]);
	rounds = atoi(argv[2]);
	if (swap_pin() < 0) {
		perror("swap-dl: sched_setaffinity");
		return 1;
	}
	for (int r = 0; r < rounds; r++) {
		const char *lib = argv[3 + r % (argc - 3)];
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		void (*mid)(unsigned long) =
		    h ? (void (*)(unsigned long))dlsym(h, "swap_mid") : NULL;

		if (!mid) {
			fprintf(stderr, "swap-dl: %s\n", dlerror());
			return 1;
		}
		if (!first)
			first = (uintptr_t)mid;
		if ((uintptr_t)mid != first) {
			fprintf(stderr,
				"swap-dl: %s's swap_mid at %#lx, the first library's at %#lx\n",
				lib, (unsigned long)(uintptr_t)mid, (unsigned long)first);
			return 3;
		}
		run(mid, ms);
		dlclose(h);
	}
	return 0;
}
