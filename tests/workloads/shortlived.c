// SPDX-License-Identifier: BSD-2-Clause
/*
 * shortlived [COUNT] [MS]: start COUNT processes (default 40) one after
 * another, each a fresh exec of this program that burns MS milliseconds of
 * CPU (default 60) in main;child_work;child_spin and exits.  A profiler must
 * name their frames although every one is gone by the end of the run.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static volatile uint64_t sink;

WL_FN void child_spin(double until)
{
	volatile uint64_t x = 0;

	while (wl_now() < until)
		for (int i = 0; i < 10000; i++)
			x += (uint64_t)i;
	sink += x;
}

WL_FN void child_work(double ms)
{
	volatile int frame = 0;

	child_spin(wl_now() + ms / 1000);
	(void)frame;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--child") == 0) {
		child_work(argc > 2 ? atof(argv[2]) : 60);
		return 0;
	}
	int count = argc > 1 ? atoi(argv[1]) : 40;
	const char *ms = argc > 2 ? argv[2] : "60";
	/* exec the real path, not /proc/self/exe, so that the children's comm is ours */
	char *self = realpath("/proc/self/exe", NULL);

	if (!self)
		return 1;

	for (int i = 0; i < count; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			execl(self, argv[0], "--child", ms, (char *)NULL);
			perror("exec");
			_exit(127);
		}
		int status;
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			return 1;
	}
	return 0;
}
