// SPDX-License-Identifier: BSD-2-Clause
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fg/bigmem.h"
#include "unit.h"

/* a sanitizer's malloc() (which has no mallopt()) */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#define SANITIZED __has_feature(address_sanitizer)
#else
#define SANITIZED 0
#endif

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

/*
 * The heap's bytes in memory (of its mappings, which madvise() splits), and
 * whether one of them has the VmFlags `flag` (in /proc/self/smaps).
 */
static size_t heap_bytes(const char *flag, int *has)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char buf[512];
	unsigned long lo, hi, kib;
	size_t size = 0;
	int in_heap = 0;

	*has = 0;
	while (f && fgets(buf, sizeof(buf), f)) {
		if (sscanf(buf, "%lx-%lx ", &lo, &hi) == 2 && strchr(buf, '-') < strchr(buf, ' ')) {
			in_heap = strstr(buf, "[heap]") != NULL;
		} else if (in_heap && sscanf(buf, "Rss: %lu kB", &kib) == 1) {
			size += kib << 10;
		} else if (in_heap && !strncmp(buf, "VmFlags:", 8)) {
			*has |= strstr(buf, flag) != NULL;
		}
	}
	if (f)
		fclose(f);
	return size;
}

/* Whether p lies in the heap (rather than in a mapping of its own). */
static int in_heap(const void *p)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char buf[512];
	unsigned long lo, hi;
	int in = 0;

	while (f && fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "%lx-%lx ", &lo, &hi) == 2 && strstr(buf, "[heap]"))
			in |= (uintptr_t)p >= lo && (uintptr_t)p < hi;
	if (f)
		fclose(f);
	return in;
}

/*
 * While on, a 5 MiB block comes from the heap, grown in huge pages (the
 * kernel's VM_HUGEPAGE, "hg"); after, the heap's free pages are given back,
 * and a block larger than its room has a mapping of its own again.
 */
TEST(heap_huge_while_on)
{
	unsigned char *p, *q, *probe = malloc(64);
	int huge, kernels = probe && in_heap(probe);

	free(probe);
	if (!kernels) {
		/* qemu-user: malloc()'s heap is an emulated one, not the kernel's [heap] */
		printf("# the heap is not the kernel's [heap] mapping here: not checked\n");
		return;
	}
	if (!fg_heap_huge_begin(16u << 20)) {
#if defined(__GLIBC__) && !SANITIZED
		CHECK(!"fg_heap_huge_begin() refused with glibc's malloc");
#endif
		fg_heap_huge_end();
		return;
	}
	p = malloc(5u << 20);
	CHECK(p != NULL);
	memset(p, 1, 5u << 20);
	CHECK(in_heap(p));
	CHECK(heap_bytes(" hg", &huge) >= 5u << 20);
	CHECK(huge);
	free(p);
	fg_heap_huge_end();
	CHECK(heap_bytes(" hg", &huge) < 2u << 20);
	/* more than the heap's room: a mapping of its own, as before */
	q = malloc(24u << 20);
	CHECK(q != NULL);
	CHECK(!in_heap(q));
	free(q);
}

int main(void)
{
	RUN(grow_keeps_contents_zeroes_the_rest);
	RUN(sparse_only_the_pages_touched);
	RUN(heap_huge_while_on);
	return unit_done();
}
