// SPDX-License-Identifier: BSD-2-Clause
/*
 * faults [MB [split]]: touch MB (default 64) of fresh anonymous memory, one
 * write a page, each write a page fault: all of them in touch_pages(), or
 * with "split", 60%, 30% and 10% in touch_most(), touch_some() and
 * touch_few().  Transparent huge pages are turned off for the memory, so
 * that each 4 KiB page faults on its own.
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

/*
 * A function that writes once a page of p[0..n), each write its own: one
 * for each name below.  The volatile local keeps each one's frame (see
 * common.h).
 */
#define TOUCHER(name)                                                                              \
	WL_FN void name(char *p, size_t n, size_t page)                                            \
	{                                                                                          \
		volatile int frame = 0;                                                            \
		for (size_t off = 0; off < n; off += page)                                         \
			((volatile char *)p)[off] = 1;                                             \
		(void)frame;                                                                       \
	}

TOUCHER(touch_pages)
TOUCHER(touch_most)
TOUCHER(touch_some)
TOUCHER(touch_few)

int main(int argc, char **argv)
{
	size_t mb = argc > 1 ? (size_t)atol(argv[1]) : 64;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = mb << 20;
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || !n)
		return 1;
	madvise(p, n, MADV_NOHUGEPAGE);
	if (argc > 2 && strcmp(argv[2], "split") == 0) {
		size_t most = n / 10 * 6 / page * page, some = n / 10 * 3 / page * page;

		touch_most(p, most, page);
		touch_some(p + most, some, page);
		touch_few(p + most + some, n - most - some, page);
	} else {
		touch_pages(p, n, page);
	}
	return 0;
}
