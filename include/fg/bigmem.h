/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Large arrays in transparent huge pages (or, fg_big_grow_sparse(), in
 * ordinary pages that are only faulted in where touched).
 *
 * A page touched for the first time costs a page fault; in a guest with
 * shadow page tables (the VMs fg is developed on) that was about 15 us for
 * each 4 KiB page (about 2 us on the guest of 2026-12-01), so that filling
 * 4 MiB of fresh malloc()ed memory took 15 ms, longer than parsing what goes
 * into it.  A 2 MiB huge page costs one fault, and clearing the whole page.
 * From 2 MiB on, fg_big_grow() maps whole, aligned 2 MiB units and asks for
 * huge pages (madvise(MADV_HUGEPAGE), which works with the kernel's default
 * "madvise" setting); where there are none, it is ordinary memory.  Sizes
 * are powers of two from 64 KiB; growing copies, so ask early for what will
 * be needed.
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
	int sparse;  /* fg_big_grow_sparse(): never in huge pages */
};

/* Make b->p hold at least `need` bytes, keeping its contents (zeroed past them). */
void fg_big_grow(struct fg_big *b, size_t need);

/*
 * The same for an array of which a run may touch only a few pages here and
 * there (a hash table, a table filled as lookups land on it): ordinary
 * pages, never huge ones (MADV_NOHUGEPAGE, also where the kernel's setting
 * is "always").  A huge page is cleared whole at its first touch: 0.35 to
 * 0.7 ms on these guests, and at times a stall of several ms while the
 * kernel compacts memory for it, against about 2 us for a 4 KiB page.
 */
void fg_big_grow_sparse(struct fg_big *b, size_t need);
void fg_big_free(struct fg_big *b);

/*
 * For a library that copies big things through malloc(), such as libbpf,
 * which reads the kernel's BTF (5 MiB) and copies it once more as it loads a
 * program: until fg_heap_huge_end(), malloc()'s blocks of up to
 * FG_HEAP_HUGE_MAX bytes come from the heap rather than from mmap(), and the
 * heap is first grown by `size` bytes in huge pages.  For libbpf's load that
 * is some 50 page faults rather than 2,800 (about 10 ms of CPU rather than
 * 48 on these guests).  fg_heap_huge_end() gives back to the kernel what is
 * free, and from then on blocks from 4 MiB on have mappings of their own.
 * Call both from the main thread, while no other thread allocates much (the
 * other threads' malloc() arenas are left as they are).
 * fg_heap_huge_begin() returns whether it could; without glibc's malloc (a
 * sanitizer's, say) both do nothing.
 */
#define FG_HEAP_HUGE_MAX (32u << 20)
int fg_heap_huge_begin(size_t size);
void fg_heap_huge_end(void);

#endif
