// SPDX-License-Identifier: BSD-2-Clause
/*
 * writes [N]: write(2) one byte to /dev/null exactly N times (default 1000),
 * all from writer(), by the system call instruction itself: each call's
 * user stack is writer <- main, with no libc wrapper in between.
 */
#include <fcntl.h>
#include <sys/syscall.h>

#include "common.h"

WL_FN long writer(int fd, long n)
{
	volatile int frame = 0;
	long bad = 0;

	for (long i = 0; i < n; i++)
		bad += wl_syscall3(SYS_write, fd, (long)"x", 1) != 1;
	(void)frame;
	return bad;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	int fd = open("/dev/null", O_WRONLY);

	if (fd < 0 || n < 0)
		return 1;
	return writer(fd, n) ? 1 : 0;
}
