/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Large arrays in transparent huge pages.
 *
 * A page touched for the first time costs a page fault; in a guest with
 * shadow page tables (the VMs fg is developed on) that is about 15 us for
 * each 4 KiB page, so that filling 4 MiB of fresh malloc()ed memory takes
 * 15 ms, longer than parsing what goes into it.  A 2 MiB huge page costs one
 * fault.  From 2 MiB on, fg_big_grow() maps whole, aligned 2 MiB units and
 * asks for huge pages (madvise(MADV_HUGEPAGE), which works with the kernel's
 * default "madvise" setting); where there are none, it is ordinary memory.
 * Sizes are powers of two from 64 KiB; growing copies, so ask early for what
 * will be needed.
 *
 *	struct fg_big b = { 0 };
 *	fg_big_grow(&b, n * sizeof(*v));	// dies when out of memory
 *	v = b.p; ...
 *	fg_big_free(&b);
 */
#ifndef FG_BIGMEM_H
#define FG_BIGMEM_H

#include <stddef.h>

struct fg_big {
	void *p;     /* NULL until the first fg_big_grow() */
	size_t size; /* bytes usable at p (a power of two) */
};

/* Make b->p hold at least `need` bytes, keeping its contents (zeroed past them). */
void fg_big_grow(struct fg_big *b, size_t need);
void fg_big_free(struct fg_big *b);

#endif
