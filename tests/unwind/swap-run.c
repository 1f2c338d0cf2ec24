// SPDX-License-Identifier: BSD-2-Clause
/*
 * swap-run MS ROUND...: the swap fixtures (tests/unwind/swap.c) run one
 * ROUND after the other, the programs of a round (separated by commas) at
 * once, each for MS milliseconds, all on one CPU (the first this process
 * may use): the walks of one file follow those of another on that CPU.
 * The first round starts after MS milliseconds of sleep (fg-sample has
 * read swap-run's own mappings by then).  Built statically, so that its
 * own files are itself and the vdso, mapped at once by exec.  Exit 1 when
 * a program failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "swap.h"

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 0;
	int bad = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: swap-run MS ROUND...\n");
		return 2;
	}
	if (swap_pin() < 0) {
		perror("swap-run: sched_setaffinity");
		return 1;
	}
	nanosleep(&(struct timespec){(time_t)(ms / 1000), (long)(ms % 1000) * 1000000}, NULL);
	for (int r = 2; r < argc; r++) {
		char *round = strdup(argv[r]), *save = NULL, *prog;
		int n = 0, st;

		for (prog = strtok_r(round, ",", &save); prog; prog = strtok_r(NULL, ",", &save)) {
			pid_t pid = fork();

			if (pid == 0) {
				execl(prog, prog, argv[1], (char *)NULL);
				perror(prog);
				_exit(127);
			}
			if (pid < 0)
				bad = 1;
			else
				n++;
		}
		while (n-- > 0 && wait(&st) > 0)
			bad |= !WIFEXITED(st) || WEXITSTATUS(st);
		free(round);
	}
	return bad;
}
