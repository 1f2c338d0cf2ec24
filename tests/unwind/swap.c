// SPDX-License-Identifier: BSD-2-Clause
/*
 * The swap fixtures swap-a and swap-b: this program linked statically with
 * tests/unwind/swap.S built with one frame or another for swap_hot (the
 * same code at the same addresses, other rules there).  Spins in swap_hot
 * for MS milliseconds (argument 1, default 150), through run() and
 * swap_mid(), on the CPU it was given (swap-run's); then executes the
 * command that follows, if any (the same process, another file: `swap-b 150
 * swap-a 150`).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "swap.h"

__attribute__((noinline)) static void run(double ms)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		swap_mid(SWAP_SPINS);
	while (swap_ms(&t0) < ms);
	__asm__ volatile(""); /* not a tail call */
}

int main(int argc, char **argv)
{
	run(argc > 1 ? atof(argv[1]) : 150);
	if (argc > 2) {
		execv(argv[2], argv + 2);
		perror(argv[2]);
		return 1;
	}
	return 0;
}
