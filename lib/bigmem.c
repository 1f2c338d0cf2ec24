// SPDX-License-Identifier: BSD-2-Clause
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "fg/bigmem.h"
#include "fg/diag.h"

#define HUGE (2u << 20)
#define MIN_SIZE (64u << 10)

/*
 * `size` bytes, or NULL; from HUGE bytes on, HUGE-aligned and in huge pages
 * where the kernel has them.
 */
static void *map_aligned(size_t size, int sparse)
{
	size_t span = size >= HUGE && !sparse ? size + HUGE : size;
	char *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t at;

	if (p == MAP_FAILED)
		return NULL;
	if (sparse) {
		/* advice only, as below */
		(void)madvise(p, size, MADV_NOHUGEPAGE);
		return p;
	}
	if (size < HUGE)
		return p;
	at = ((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1);
	/* give back the slack on either side */
	if (at > (uintptr_t)p)
		munmap(p, at - (uintptr_t)p);
	if ((uintptr_t)p + span > at + size)
		munmap((char *)at + size, (uintptr_t)p + span - (at + size));
	/* advice only: a kernel without THP leaves it ordinary memory */
	(void)madvise((void *)at, size, MADV_HUGEPAGE);
	return (void *)at;
}

void fg_big_grow(struct fg_big *b, size_t need)
{
	size_t size = b->size ? b->size : MIN_SIZE;
	void *p;

	if (need <= b->size)
		return;
	while (size < need) {
		if (size > SIZE_MAX / 4)
			fg_diex("out of memory (allocating %zu bytes)", need);
		size *= 2;
	}
	p = map_aligned(size, b->sparse);
	if (!p)
		fg_diex("out of memory (allocating %zu bytes)", size);
	if (b->p) {
		memcpy(p, b->p, b->size);
		munmap(b->p, b->size);
	}
	b->p = p;
	b->size = size;
}

void fg_big_grow_sparse(struct fg_big *b, size_t need)
{
	b->sparse = 1;
	fg_big_grow(b, need);
}

void fg_big_free(struct fg_big *b)
{
	if (b->p)
		munmap(b->p, b->size);
	b->p = NULL;
	b->size = 0;
}

int fg_heap_huge_begin(size_t size)
{
#ifdef __GLIBC__
	uintptr_t at, end;
	char *p;

	if (size > FG_HEAP_HUGE_MAX - HUGE)
		size = FG_HEAP_HUGE_MAX - HUGE;
	/*
	 * Blocks below the threshold come from the heap; a free()d top of the
	 * heap below the trim threshold stays mapped, so that the block grown
	 * here and freed at once is the room the next ones are cut from.
	 */
	if (!mallopt(M_MMAP_THRESHOLD, (int)FG_HEAP_HUGE_MAX) ||
	    !mallopt(M_TRIM_THRESHOLD, (int)(2 * FG_HEAP_HUGE_MAX)))
		return 0;
	p = malloc(size);
	if (!p)
		return 0;
	at = ((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1);
	end = ((uintptr_t)p + size) & ~(uintptr_t)(HUGE - 1);
	/* advice only, as in map_aligned() */
	if (end > at)
		(void)madvise((void *)at, end - at, MADV_HUGEPAGE);
	free(p);
	return 1;
#else
	(void)size;
	return 0;
#endif
}

void fg_heap_huge_end(void)
{
#ifdef __GLIBC__
	/*
	 * Where glibc's own rule would have moved the thresholds as libbpf
	 * freed its mapped copies (to the size of the largest block freed, and
	 * twice that; set by hand, they move no more).
	 */
	(void)mallopt(M_MMAP_THRESHOLD, 4 << 20);
	(void)mallopt(M_TRIM_THRESHOLD, 8 << 20);
	(void)malloc_trim(0);
#endif
}
