// SPDX-License-Identifier: BSD-2-Clause
/*
 * switches [N]: two threads, "pinger" and "ponger", pass a byte back and
 * forth N times (default 2000) through two pipes.  Each waits in its own
 * function, ping() or pong(), reading by the system call instruction
 * itself, so each gives up its CPU over and over with its own stack: a
 * context switch's sample of pinger must show ping, of ponger pong.
 */
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

static int to_pong[2], to_ping[2];
static long rounds = 2000;

WL_FN void ping(void)
{
	char c = 'x';

	for (long i = 0; i < rounds; i++) {
		if (wl_syscall3(SYS_write, to_pong[1], (long)&c, 1) != 1 ||
		    wl_syscall3(SYS_read, to_ping[0], (long)&c, 1) != 1)
			exit(1);
	}
}

WL_FN void pong(void)
{
	char c;

	for (long i = 0; i < rounds; i++) {
		if (wl_syscall3(SYS_read, to_pong[0], (long)&c, 1) != 1 ||
		    wl_syscall3(SYS_write, to_ping[1], (long)&c, 1) != 1)
			exit(1);
	}
}

static void *run(void *arg)
{
	int which = (int)(long)arg;

	pthread_setname_np(pthread_self(), which ? "ponger" : "pinger");
	if (which)
		pong();
	else
		ping();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	if (argc > 1)
		rounds = atol(argv[1]);
	if (pipe(to_pong) < 0 || pipe(to_ping) < 0)
		return 1;
	if (pthread_create(&a, NULL, run, (void *)0L) || pthread_create(&b, NULL, run, (void *)1L))
		return 1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
