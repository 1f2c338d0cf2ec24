// SPDX-License-Identifier: BSD-2-Clause
/*
 * syscalls [SECONDS]: spend most of the time in the kernel, copying from
 * /dev/zero and writing to /dev/null through read(2)/write(2), so a profile
 * shows named kernel frames under do_syscalls.
 */
#include <fcntl.h>
#include <unistd.h>

#include "common.h"

static char buf[1 << 16];

WL_FN void do_syscalls(int in, int out)
{
	volatile int frame = 0;

	for (int i = 0; i < 64; i++) {
		if (read(in, buf, sizeof(buf)) < 0 || write(out, buf, sizeof(buf)) < 0)
			exit(1);
	}
	(void)frame;
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv, 3);
	int in = open("/dev/zero", O_RDONLY), out = open("/dev/null", O_WRONLY);

	if (in < 0 || out < 0)
		return 1;
	while (wl_now() < end)
		do_syscalls(in, out);
	return 0;
}
