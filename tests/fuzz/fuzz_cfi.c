// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz lib/cfi and lib/unwind with hostile call frame information.  The
 * first byte chooses how the rest is read:
 *
 *	0  .eh_frame bytes, in a small ELF image (tests/unit/cfi_elf.h)
 *	1  the same, found through PT_GNU_EH_FRAME (no section headers)
 *	2  .debug_frame bytes
 *	0x80-0x82  the same as 0-2 in an arm64 image (its CFI read as arm64's)
 *	3+ a whole ELF image (fg_cfi_open_mem, as the vdso is read), and the
 *	   same image's table compiled lazily (fg_cfi_from_elf_lazy, as fg-sym
 *	   reads files): through .eh_frame_hdr's search table, FDE by FDE
 *
 * Any bytes give a table or an error, never a crash.  The table must be
 * sorted, its rules in range, and each row's own address must find it.  Then
 * the input itself is unwound as a stack snapshot with the table, bounded.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libelf.h>

#include "fg/cfi.h"
#include "fg/elfsyms.h"
#include "fg/unwind.h"
#include "../unit/cfi_elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t image[65536];

static const struct fg_cfi *the_table;

static int find(void *arg, uint64_t pc, struct fg_unwind_map *m)
{
	(void)arg;
	if (pc >= (1ull << 32))
		return -ENOENT;
	m->cfi = (pc & 0x100000) ? NULL : the_table; /* some addresses walk frame pointers */
	m->bias = 0;
	return 0;
}

/*
 * The same walk through a cache by address space (its trails and replays):
 * the frames and the end must be those of the walk without one.  A space
 * never used before each time: the cache holds pointers into tables freed
 * since.
 */
static void same_with_cache(const struct fg_cfi_regs *g, const uint8_t *stack, size_t size,
			    const struct fg_unwind_frame *want, size_t nwant,
			    enum fg_unwind_end want_end, uint64_t space)
{
	static struct fg_unwind_cache *cache;
	struct fg_unwind_ops ops = {.find = find, .space = &space};
	struct fg_unwind_frame f[64];
	enum fg_unwind_end end;

	if (!cache && !(cache = calloc(1, sizeof(*cache))))
		abort();
	ops.cache = cache;
	size_t n = fg_unwind(&ops, g, 0x10000, stack, size, f, 64, &end);
	if (n != nwant || end != want_end || memcmp(f, want, n * sizeof(*f)) != 0)
		abort();
}

/* Unwind the input as a stack from pc with table t, bounded; and again with a cache. */
static void walk_from(const struct fg_cfi *t, uint64_t pc, const uint8_t *stack, size_t size)
{
	static uint64_t space;
	struct fg_unwind_ops ops = {.find = find};
	struct fg_unwind_frame f[64], f2[64];
	enum fg_unwind_end end, end2;
	struct fg_cfi_regs g;
	uint8_t other[4096];

	the_table = t;
	memset(&g, 0, sizeof(g));
	g.r[FG_CFI_RIP] = pc;
	g.r[FG_CFI_RSP] = 0x10000;
	g.r[FG_CFI_RBP] = 0x10000 + (size > 16 ? stack[0] : 0);
	g.valid = (1u << FG_CFI_NREGS) - 1;
	g.arch = t->arch; /* the table's registers: x86-64's or arm64's */
	size_t n = fg_unwind(&ops, &g, 0x10000, stack, size, f, 64, &end);
	if (n > 64 || end >= FG_UNWIND_END_COUNT)
		abort();
	/* the first walk keeps a trail, the second may replay it */
	space++;
	same_with_cache(&g, stack, size, f, n, end, space);
	same_with_cache(&g, stack, size, f, n, end, space);
	/*
	 * then, under the same trail, another stack (a word changed) and another
	 * rbp: a replay must not give the first stack's frames where a walk
	 * would not
	 */
	if (size > sizeof(other))
		return;
	memcpy(other, stack, size);
	if (size >= 16)
		other[(stack[1] % (size / 8)) * 8] ^= 0x10;
	g.r[FG_CFI_RBP] += 8;
	size_t n2 = fg_unwind(&ops, &g, 0x10000, other, size, f2, 64, &end2);
	same_with_cache(&g, other, size, f2, n2, end2, space);
	/* and the first stack with rsp a word into the copy: the walk reads elsewhere */
	g.r[FG_CFI_RSP] += 8;
	n2 = fg_unwind(&ops, &g, 0x10000, stack, size, f2, 64, &end2);
	same_with_cache(&g, stack, size, f2, n2, end2, space);
}

static void check(const struct fg_cfi *c, const uint8_t *stack, size_t size)
{
	uint64_t s, e;

	for (uint32_t i = 0; i < c->nrows; i++) {
		if (c->rows[i].rule >= c->nrules)
			abort();
		if (i && c->rows[i].pc <= c->rows[i - 1].pc)
			abort();
		if (fg_cfi_lookup_range(c, c->base + c->rows[i].pc, &s, &e) !=
		    &c->rules[c->rows[i].rule])
			abort();
	}
	if (c->nrules == 0 || c->rules[0].kind != FG_CFI_NONE)
		abort();
	/* the input as a stack, from each of a few rows */
	for (uint32_t i = 0; i < c->nrows && i < 8; i++)
		walk_from(c, c->base + c->rows[i].pc, stack, size);
}

/*
 * The image's lazy table: every answer a rule of a known kind within its
 * range, the whole table's where the header was not followed; then the input
 * unwound with it from the whole table's rows and from addresses the input
 * gives.
 */
static void check_lazy(const struct fg_cfi *whole, const uint8_t *img, size_t n,
		       const uint8_t *stack, size_t size)
{
	void *copy;
	Elf *elf = fg_elf_memory(img, n, &copy);
	struct fg_cfi *z;
	uint64_t s, e;

	if (!elf)
		return;
	z = fg_cfi_from_elf_lazy(elf);
	elf_end(elf);
	free(copy);
	if (!z)
		return;
	for (uint32_t i = 0; whole && i < whole->nrows; i++) {
		uint64_t pc = whole->base + whole->rows[i].pc;

		for (uint64_t at = pc ? pc - 1 : 0; at <= pc; at++) {
			const struct fg_cfi_rule *r = fg_cfi_lookup_range(z, at, &s, &e);

			if (r->kind > FG_CFI_INVALID ||
			    (r->kind != FG_CFI_NONE && (at < s || at >= e)))
				abort();
			if (!z->lazy && memcmp(r, fg_cfi_lookup(whole, at), sizeof(*r)) != 0)
				abort();
		}
	}
	for (size_t i = 0; i + 4 <= size && i < 64; i += 4) {
		uint32_t at;

		memcpy(&at, stack + i, 4);
		if (fg_cfi_lookup(z, at)->kind > FG_CFI_INVALID)
			abort();
	}
	for (uint32_t i = 0; whole && i < whole->nrows && i < 8; i++)
		walk_from(z, whole->base + whole->rows[i].pc, stack, size);
	fg_cfi_free(z);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfib b;
	struct fg_cfi *c;
	size_t n;
	int mode;
	bool arm64;

	if (size < 1)
		return 0;
	/* 0x80-0x82: modes 0-2 in an arm64 image */
	arm64 = data[0] >= 0x80 && data[0] <= 0x82;
	mode = arm64 ? data[0] - 0x80 : data[0];
	if (mode >= 3) {
		c = fg_cfi_open_mem(data + 1, size - 1);
	} else {
		if (size - 1 > sizeof(b.b))
			return 0;
		memset(&b, 0, sizeof(b));
		b.vaddr = CFI_ELF_EH_OFF;
		b.debug = mode == 2;
		memcpy(b.b, data + 1, size - 1);
		b.n = size - 1;
		n = cfi_elf(image, sizeof(image), b.debug ? NULL : &b, b.debug ? &b : NULL,
			    mode == 1);
		if (arm64)
			image[18] = EM_AARCH64;
		c = fg_cfi_open_mem(image, n);
	}
	if (c)
		check(c, data, size);
	if (mode >= 3)
		check_lazy(c, data + 1, size - 1, data, size);
	fg_cfi_free(c);
	return 0;
}
