// SPDX-License-Identifier: BSD-2-Clause
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fg/bigmem.h"
#include "unit.h"

/* The pages of [p, p + size) the kernel has in memory for us (mincore). */
static size_t resident(const void *p, size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (size + page - 1) / page, in = 0;
	unsigned char *vec = calloc(n, 1);

	if (!vec || mincore((void *)p, size, vec) < 0) {
		free(vec);
		return SIZE_MAX;
	}
	for (size_t i = 0; i < n; i++)
		in += vec[i] & 1;
	free(vec);
	return in;
}

TEST(grow_keeps_contents_zeroes_the_rest)
{
	struct fg_big b = {0};

	fg_big_grow(&b, 100);
	CHECK(b.p != NULL);
	CHECK(b.size >= 100);
	((unsigned char *)b.p)[99] = 7;
	fg_big_grow(&b, 3u << 20);
	CHECK(b.size >= 3u << 20);
	CHECK_INT(((unsigned char *)b.p)[99], 7);
	CHECK_INT(((unsigned char *)b.p)[(3u << 20) - 1], 0);
	fg_big_free(&b);
	CHECK(b.p == NULL);
}

/*
 * A sparse array is faulted in where touched, a page at a time, whatever
 * the kernel's huge page setting: one byte of 8 MiB touched is one page in
 * memory (a huge page would be 512).
 */
TEST(sparse_only_the_pages_touched)
{
	struct fg_big b = {0};
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *p;

	fg_big_grow_sparse(&b, 8u << 20);
	p = b.p;
	CHECK(p != NULL);
	CHECK_INT(resident(p, b.size), 0);
	p[(4u << 20) + 5] = 1;
	CHECK_INT(resident(p, b.size), 1);
	CHECK_INT(resident(p + (4u << 20), page), 1);
	/* growing copies it, and stays sparse: the copy's pages, not huge ones */
	fg_big_grow(&b, 16u << 20);
	p = b.p;
	CHECK_INT(p[(4u << 20) + 5], 1);
	CHECK(resident(p, b.size) <= (8u << 20) / page);
	CHECK_INT(resident(p + (8u << 20), 8u << 20), 0);
	p[(12u << 20) + 1] = 1;
	CHECK_INT(resident(p + (8u << 20), 8u << 20), 1);
	fg_big_free(&b);
}

int main(void)
{
	RUN(grow_keeps_contents_zeroes_the_rest);
	RUN(sparse_only_the_pages_touched);
	return unit_done();
}
