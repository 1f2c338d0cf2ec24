// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <string.h>

#include "fg/unwind.h"

const char *const fg_unwind_end_names[FG_UNWIND_END_COUNT] = {
    [FG_UNWIND_END_STOP] = "whole stack",
    [FG_UNWIND_END_TRUNCATED] = "snapshot too small",
    [FG_UNWIND_END_NOINFO] = "no unwind information",
    [FG_UNWIND_END_UNREADABLE] = "unreadable",
    [FG_UNWIND_END_LOOP] = "loop",
    [FG_UNWIND_END_MAXDEPTH] = "too deep",
    [FG_UNWIND_END_INVALID] = "unsupported rule",
    [FG_UNWIND_END_NOREG] = "register unknown",
    [FG_UNWIND_END_NOMAP] = "no mapping",
};

/* The step function's memory: the snapshot, then the caller's reader. */
struct snap {
	struct fg_cfi_mem mem;
	const struct fg_unwind_ops *ops;
	uint64_t sp;
	const uint8_t *data;
	size_t size;
};

static int snap_read(const struct fg_cfi_mem *m, __u64 addr, __u64 *val)
{
	const struct snap *s = (const struct snap *)m;

	if (addr >= s->sp && s->size >= 8 && addr - s->sp <= s->size - 8) {
		memcpy(val, s->data + (addr - s->sp), 8);
		return 0;
	}
	uint64_t v;

	if (s->ops->read && s->ops->read(s->ops->arg, addr, &v) == 0) {
		*val = v;
		return 0;
	}
	return addr >= s->sp ? FG_CFI_END_TRUNCATED : FG_CFI_END_UNREADABLE;
}

static enum fg_unwind_end end_of(int res)
{
	switch (res) {
	case FG_CFI_END_STOP:
		return FG_UNWIND_END_STOP;
	case FG_CFI_END_INVALID:
		return FG_UNWIND_END_INVALID;
	case FG_CFI_END_NOREG:
		return FG_UNWIND_END_NOREG;
	case FG_CFI_END_TRUNCATED:
		return FG_UNWIND_END_TRUNCATED;
	case FG_CFI_END_UNREADABLE:
		return FG_UNWIND_END_UNREADABLE;
	default:
		return FG_UNWIND_END_NOINFO;
	}
}

size_t fg_unwind(const struct fg_unwind_ops *ops, const struct fg_cfi_regs *regs, uint64_t sp,
		 const void *stack, size_t size, struct fg_unwind_frame *frames, size_t max,
		 enum fg_unwind_end *end)
{
	struct snap s = {{snap_read}, ops, sp, stack, size};
	struct fg_cfi_regs g = *regs;
	uint32_t flags = FG_UNWIND_F_EXACT;
	size_t n = 0;

	*end = FG_UNWIND_END_NOREG;
	if (!(g.valid & FG_CFI_BIT(FG_CFI_RIP)) || !(g.valid & FG_CFI_BIT(FG_CFI_RSP)))
		return 0;
	for (;;) {
		uint64_t pc = g.r[FG_CFI_RIP], look, rsp = g.r[FG_CFI_RSP];
		struct fg_unwind_map m;
		int res, err;

		if (n == max) {
			*end = FG_UNWIND_END_MAXDEPTH;
			return n;
		}
		look = (flags & FG_UNWIND_F_EXACT) || !pc ? pc : pc - 1;
		err = pc ? ops->find(ops->arg, look, &m) : -ENOENT;
		if (err == -ENOENT && n && !pc) {
			/* a return address of zero: no frame there */
			*end = FG_UNWIND_END_NOMAP;
			return n;
		}
		frames[n++] = (struct fg_unwind_frame){.pc = pc, .flags = flags};
		if (err) {
			*end = err == -ENOENT ? FG_UNWIND_END_NOMAP : FG_UNWIND_END_NOINFO;
			return n;
		}
		if (m.cfi) {
			res = fg_cfi_step(fg_cfi_lookup(m.cfi, look - m.bias), &g, &s.mem);
			flags = 0;
		} else {
			res = fg_cfi_step_fp(&g, &s.mem);
			flags = FG_UNWIND_F_FP;
		}
		if (res == FG_CFI_OK_EXACT) {
			frames[n - 1].flags |= FG_UNWIND_F_SIGNAL;
			flags |= FG_UNWIND_F_EXACT;
			/* a signal frame may switch stacks (sigaltstack): only a standstill is a
			 * loop */
			if (g.r[FG_CFI_RSP] == rsp && g.r[FG_CFI_RIP] == pc) {
				*end = FG_UNWIND_END_LOOP;
				return n;
			}
		} else if (res != FG_CFI_OK) {
			*end = end_of(res);
			return n;
		} else if (g.r[FG_CFI_RSP] <= rsp) {
			*end = FG_UNWIND_END_LOOP;
			return n;
		}
	}
}

/* x86-64 perf_regs numbers (arch/x86/include/uapi/asm/perf_regs.h) as DWARF numbers; -1: none */
static const signed char perf_to_dwarf[24] = {
    0, 3, 2, 1, 4, 5, 6, 7, 16, -1, -1, -1, -1, -1, -1, -1, 8, 9, 10, 11, 12, 13, 14, 15,
};

int fg_unwind_regs_from_perf(uint32_t abi, uint64_t mask, const uint64_t *regs, uint32_t nregs,
			     struct fg_cfi_regs *out)
{
	uint32_t k = 0;

	memset(out, 0, sizeof(*out));
	if (abi != 1 || (uint32_t)__builtin_popcountll(mask) != nregs)
		return -EINVAL;
	for (int bit = 0; bit < 64; bit++) {
		if (!(mask >> bit & 1))
			continue;
		if (bit < 24 && perf_to_dwarf[bit] >= 0) {
			out->r[perf_to_dwarf[bit]] = regs[k];
			out->valid |= FG_CFI_BIT(perf_to_dwarf[bit]);
		}
		k++;
	}
	if (!(out->valid & FG_CFI_BIT(FG_CFI_RIP)) || !(out->valid & FG_CFI_BIT(FG_CFI_RSP)))
		return -EINVAL;
	return 0;
}
