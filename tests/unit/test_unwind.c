// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fg/cfi.h"
#include "fg/procmaps.h"
#include "fg/safeio.h"
#include "fg/sample_flags.h"
#include "fg/unwind.h"
#include "fg/unwind_dw.h"
#include "unit.h"
#include "../unwind/snap.h"

/* --- the step function on a fake stack --- */

static uint64_t mem_base;
static uint64_t mem[256];

static int mem_read(const struct fg_cfi_mem *m, __u64 addr, __u64 *val)
{
	(void)m;
	if (addr < mem_base)
		return FG_CFI_END_UNREADABLE;
	if (addr - mem_base > sizeof(mem) - 8)
		return FG_CFI_END_TRUNCATED;
	memcpy(val, (const char *)mem + (addr - mem_base), 8);
	return 0;
}

static const struct fg_cfi_mem fake = {mem_read};

static void regs_at(struct fg_cfi_regs *g, uint64_t rip, uint64_t rsp, uint64_t rbp)
{
	memset(g, 0, sizeof(*g));
	g->r[FG_CFI_RIP] = rip;
	g->r[FG_CFI_RSP] = rsp;
	g->r[FG_CFI_RBP] = rbp;
	g->valid = FG_CFI_BIT(FG_CFI_RIP) | FG_CFI_BIT(FG_CFI_RSP) | FG_CFI_BIT(FG_CFI_RBP);
}

TEST(step_cfa_rules)
{
	struct fg_cfi_rule r = {.kind = FG_CFI_NORMAL,
				.cfa_reg = FG_CFI_RSP,
				.cfa_off = 16,
				.rbp = FG_CFI_AT_CFA,
				.rbp_off = -16,
				.ra = FG_CFI_AT_CFA,
				.ra_off = -8};
	struct fg_cfi_regs g;

	mem_base = 0x7000;
	memset(mem, 0, sizeof(mem));
	mem[0] = 0x1111;   /* saved rbp at 0x7000 */
	mem[1] = 0x401234; /* return address at 0x7008 */
	regs_at(&g, 0x400000, 0x7000, 0x5);
	CHECK_INT(fg_cfi_step(&r, &g, &fake), FG_CFI_OK);
	CHECK_INT(g.r[FG_CFI_RIP], 0x401234);
	CHECK_INT(g.r[FG_CFI_RSP], 0x7010);
	CHECK_INT(g.r[FG_CFI_RBP], 0x1111);
	CHECK(g.valid & FG_CFI_BIT(FG_CFI_RBP));

	/* *(rbp - 8): the realigned frame's CFA kept in memory */
	struct fg_cfi_rule d = {.kind = FG_CFI_NORMAL,
				.cfa = FG_CFI_CFA_DEREF,
				.cfa_reg = FG_CFI_RBP,
				.cfa_off = -8,
				.rbp = FG_CFI_AT_REG,
				.rbp_reg = FG_CFI_RBP,
				.ra = FG_CFI_AT_CFA,
				.ra_off = -8};
	mem[4] = 0x7100;  /* 0x7020: the CFA */
	mem[5] = 0x2222;  /* 0x7028: rbp points here: the caller's rbp */
	mem[31] = 0x4abc; /* 0x70f8: the return address */
	regs_at(&g, 0x400000, 0x7000, 0x7028);
	CHECK_INT(fg_cfi_step(&d, &g, &fake), FG_CFI_OK);
	CHECK_INT(g.r[FG_CFI_RSP], 0x7100);
	CHECK_INT(g.r[FG_CFI_RIP], 0x4abc);
	CHECK_INT(g.r[FG_CFI_RBP], 0x2222);

	/* the PLT: 8 more once rip & 15 >= 11 */
	struct fg_cfi_rule p = {.kind = FG_CFI_NORMAL,
				.cfa = FG_CFI_CFA_PLT,
				.cfa_reg = FG_CFI_RSP,
				.cfa_off = 8,
				.arg0 = 15,
				.arg1 = 11,
				.ra = FG_CFI_AT_CFA,
				.ra_off = -8};
	mem[0] = 0x10;
	mem[1] = 0x20;
	regs_at(&g, 0x40100a, 0x7000, 0);
	CHECK_INT(fg_cfi_step(&p, &g, &fake), FG_CFI_OK);
	CHECK_INT(g.r[FG_CFI_RIP], 0x10);
	regs_at(&g, 0x40100b, 0x7000, 0);
	CHECK_INT(fg_cfi_step(&p, &g, &fake), FG_CFI_OK);
	CHECK_INT(g.r[FG_CFI_RIP], 0x20);
	CHECK_INT(g.r[FG_CFI_RSP], 0x7010);
}

/* glibc's _dl_runtime_resolve: its CFA is on rbx, which the frame below saved */
TEST(step_rbx_saved_then_cfa_on_rbx)
{
	struct fg_cfi_rule saves = {.kind = FG_CFI_NORMAL,
				    .cfa_reg = FG_CFI_RSP,
				    .cfa_off = 24,
				    .rbx = FG_CFI_AT_CFA,
				    .rbx_off = -24,
				    .ra = FG_CFI_AT_CFA,
				    .ra_off = -8};
	struct fg_cfi_rule on_rbx = {.kind = FG_CFI_NORMAL,
				     .cfa_reg = FG_CFI_RBX,
				     .cfa_off = 16,
				     .rbx = FG_CFI_AT_CFA,
				     .rbx_off = -16,
				     .ra = FG_CFI_AT_CFA,
				     .ra_off = -8};
	struct fg_cfi_rule leaves = {.kind = FG_CFI_NORMAL,
				     .cfa_reg = FG_CFI_RSP,
				     .cfa_off = 8,
				     .ra = FG_CFI_AT_CFA,
				     .ra_off = -8};
	struct fg_cfi_regs g;

	mem_base = 0x7000;
	memset(mem, 0, sizeof(mem));
	mem[0] = 0x7040;   /* 0x7000: rbx saved by the callee */
	mem[2] = 0x401000; /* 0x7010: its return address, into the trampoline */
	mem[8] = 0x9999;   /* 0x7040: the trampoline's own saved rbx */
	mem[9] = 0x402000; /* 0x7048: the trampoline's return address */
	regs_at(&g, 0x400000, 0x7000, 0);
	g.r[FG_CFI_RBX] = 0x1; /* clobbered in the callee */
	g.valid |= FG_CFI_BIT(FG_CFI_RBX);
	CHECK_INT(fg_cfi_step(&saves, &g, &fake), FG_CFI_OK);
	CHECK_INT(g.r[FG_CFI_RBX], 0x7040);
	CHECK(g.valid & FG_CFI_BIT(FG_CFI_RBX));
	CHECK_INT(fg_cfi_step(&on_rbx, &g, &fake), FG_CFI_OK);
	CHECK_INT(g.r[FG_CFI_RSP], 0x7050);
	CHECK_INT(g.r[FG_CFI_RIP], 0x402000);
	CHECK_INT(g.r[FG_CFI_RBX], 0x9999);
	/* a frame without a rule for rbx keeps it (callee-saved) */
	g.r[FG_CFI_RSP] = 0x7000;
	CHECK_INT(fg_cfi_step(&leaves, &g, &fake), FG_CFI_OK);
	CHECK_INT(g.r[FG_CFI_RBX], 0x9999);
	/* not known: a CFA on rbx ends the walk */
	g.valid &= ~FG_CFI_BIT(FG_CFI_RBX);
	CHECK_INT(fg_cfi_step(&on_rbx, &g, &fake), FG_CFI_END_NOREG);
}

TEST(step_ends)
{
	struct fg_cfi_rule r = {.kind = FG_CFI_NORMAL,
				.cfa_reg = FG_CFI_RBP,
				.cfa_off = 16,
				.ra = FG_CFI_AT_CFA,
				.ra_off = -8};
	struct fg_cfi_regs g, before;

	mem_base = 0x7000;
	regs_at(&g, 0x400000, 0x7000, 0x7000);
	g.valid &= ~FG_CFI_BIT(FG_CFI_RBP);
	before = g;
	CHECK_INT(fg_cfi_step(&r, &g, &fake), FG_CFI_END_NOREG);
	CHECK(memcmp(&g, &before, sizeof(g)) == 0);
	regs_at(&g, 0x400000, 0x7000, 0x9000);
	CHECK_INT(fg_cfi_step(&r, &g, &fake), FG_CFI_END_TRUNCATED);
	regs_at(&g, 0x400000, 0x7000, 0x100);
	CHECK_INT(fg_cfi_step(&r, &g, &fake), FG_CFI_END_UNREADABLE);
	r.kind = FG_CFI_STOP;
	CHECK_INT(fg_cfi_step(&r, &g, &fake), FG_CFI_END_STOP);
	r.kind = FG_CFI_INVALID;
	CHECK_INT(fg_cfi_step(&r, &g, &fake), FG_CFI_END_INVALID);
	r.kind = FG_CFI_NONE;
	CHECK_INT(fg_cfi_step(&r, &g, &fake), FG_CFI_END_NOINFO);

	/* rbp saved where the snapshot does not reach: unknown, the walk goes on */
	struct fg_cfi_rule e = {.kind = FG_CFI_NORMAL,
				.cfa_reg = FG_CFI_RSP,
				.cfa_off = 16,
				.rbp = FG_CFI_AT_CFA,
				.rbp_off = -48,
				.ra = FG_CFI_AT_CFA,
				.ra_off = -8};
	mem[1] = 0x4242;
	regs_at(&g, 0x400000, 0x7000, 0x1);
	CHECK_INT(fg_cfi_step(&e, &g, &fake), FG_CFI_OK);
	CHECK_INT(g.r[FG_CFI_RIP], 0x4242);
	CHECK(!(g.valid & FG_CFI_BIT(FG_CFI_RBP)));
}

TEST(step_signal_frame_and_frame_pointer)
{
	struct fg_cfi_rule s = {.kind = FG_CFI_SIGNAL};
	struct fg_cfi_regs g;
	/* struct sigcontext's order: r8-r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip */
	static const int dwarf[17] = {8, 9, 10, 11, 12, 13, 14, 15, 5, 4, 6, 3, 1, 0, 2, 7, 16};

	mem_base = 0x7000;
	memset(mem, 0, sizeof(mem));
	for (int i = 0; i < 17; i++)
		mem[5 + i] = 0x1000 + (uint64_t)i; /* gregs at byte 40 of the ucontext */
	regs_at(&g, 0x400000, 0x7000, 0);
	CHECK_INT(fg_cfi_step(&s, &g, &fake), FG_CFI_OK_EXACT);
	CHECK_INT(g.valid, (1u << 17) - 1);
	for (int i = 0; i < 17; i++)
		CHECK_INT(g.r[dwarf[i]], 0x1000 + i);

	/* frame pointers: caller's rbp at rbp, return address above it */
	mem[2] = 0x7080;
	mem[3] = 0x404040;
	regs_at(&g, 0x400000, 0x7000, 0x7010);
	CHECK_INT(fg_cfi_step_fp(&g, &fake), FG_CFI_OK);
	CHECK_INT(g.r[FG_CFI_RIP], 0x404040);
	CHECK_INT(g.r[FG_CFI_RSP], 0x7020);
	CHECK_INT(g.r[FG_CFI_RBP], 0x7080);
}

/* The step of an arm64 rule: from x30, or from the stack with its signature stripped. */
TEST(step_aarch64)
{
	struct fg_cfi_rule leaf = {
	    .kind = FG_CFI_NORMAL, .cfa_reg = FG_CFI_A64_SP, .ra = FG_CFI_SAME};
	struct fg_cfi_rule saved = {.kind = FG_CFI_NORMAL,
				    .cfa_reg = FG_CFI_A64_FP,
				    .cfa_off = 16,
				    .ra = FG_CFI_AT_CFA,
				    .ra_off = -8,
				    .rbp = FG_CFI_AT_CFA,
				    .rbp_off = -16,
				    .rbx = FG_CFI_AT_CFA,
				    .rbx_off = -8,
				    .flags = FG_CFI_RULE_F_PAC};
	struct fg_cfi_regs g = {.arch = FG_CFI_ARCH_ARM64};

	g.r[FG_CFI_A64_PC] = 0x400100;
	g.r[FG_CFI_A64_SP] = 0x7000;
	g.r[FG_CFI_A64_FP] = 0x7000;
	g.r[FG_CFI_A64_LR] = 0x400204;
	g.valid = FG_CFI_BIT(FG_CFI_A64_PC) | FG_CFI_BIT(FG_CFI_A64_SP) |
		  FG_CFI_BIT(FG_CFI_A64_FP) | FG_CFI_BIT(FG_CFI_A64_LR);
	CHECK_INT(fg_cfi_step(&leaf, &g, &fake), FG_CFI_OK);
	CHECK_INT(g.r[FG_CFI_A64_PC], 0x400204);
	CHECK_INT(g.r[FG_CFI_A64_SP], 0x7000);
	CHECK_INT(g.r[FG_CFI_A64_LR], 0x400204);
	/* the frame record at x29: {x29 0x7100, x30 signed in its top bits} */
	mem_base = 0x7000;
	mem[0] = 0x7100;
	mem[1] = 0x003a000000400308ull;
	CHECK_INT(fg_cfi_step(&saved, &g, &fake), FG_CFI_OK);
	CHECK_INT(g.r[FG_CFI_A64_PC], 0x400308);
	CHECK_INT(g.r[FG_CFI_A64_SP], 0x7010);
	CHECK_INT(g.r[FG_CFI_A64_FP], 0x7100);
	CHECK_INT(g.arch, FG_CFI_ARCH_ARM64);
	/* without x30, a rule that wants it cannot step */
	g.valid &= ~FG_CFI_BIT(FG_CFI_A64_LR);
	CHECK_INT(fg_cfi_step(&leaf, &g, &fake), FG_CFI_END_NOREG);
}

/* arm64's perf_regs (abi 2): x29, x30, sp and pc into their slots, the others dropped */
TEST(regs_from_perf_arm64)
{
	uint64_t regs[33];
	struct fg_cfi_regs g;

	for (int i = 0; i < 33; i++)
		regs[i] = 0x100 + (uint64_t)i;
	CHECK_INT(fg_unwind_regs_from_perf(FG_USTACK_ABI_ARM64, FG_USTACK_REGS_ARM64, regs, 33, &g),
		  0);
	CHECK_INT(g.arch, FG_CFI_ARCH_ARM64);
	CHECK_INT(g.r[FG_CFI_A64_FP], 0x100 + 29);
	CHECK_INT(g.r[FG_CFI_A64_LR], 0x100 + 30);
	CHECK_INT(g.r[FG_CFI_A64_SP], 0x100 + 31);
	CHECK_INT(g.r[FG_CFI_A64_PC], 0x100 + 32);
	CHECK_INT(g.valid, FG_CFI_BIT(FG_CFI_A64_FP) | FG_CFI_BIT(FG_CFI_A64_LR) |
			       FG_CFI_BIT(FG_CFI_A64_SP) | FG_CFI_BIT(FG_CFI_A64_PC));
	/* sp and pc alone (bits 31, 32), in bit order */
	CHECK_INT(fg_unwind_regs_from_perf(FG_USTACK_ABI_ARM64, 3ull << 31, regs + 31, 2, &g), 0);
	CHECK_INT(g.r[FG_CFI_A64_PC], 0x100 + 32);
	CHECK_INT(g.valid, FG_CFI_BIT(FG_CFI_A64_SP) | FG_CFI_BIT(FG_CFI_A64_PC));
	/* no pc; a count that does not match; bits past pc */
	CHECK_INT(fg_unwind_regs_from_perf(FG_USTACK_ABI_ARM64, 1ull << 31, regs, 1, &g), -EINVAL);
	CHECK_INT(fg_unwind_regs_from_perf(FG_USTACK_ABI_ARM64, 3ull << 31, regs, 3, &g), -EINVAL);
	CHECK_INT(fg_unwind_regs_from_perf(FG_USTACK_ABI_ARM64, 7ull << 31, regs, 3, &g), -EINVAL);
}

TEST(regs_from_perf_order)
{
	/* ax bx cx dx si di bp sp ip, then r8-r15 */
	uint64_t regs[17];
	struct fg_cfi_regs g;

	for (int i = 0; i < 17; i++)
		regs[i] = 100 + (uint64_t)i;
	CHECK_INT(fg_unwind_regs_from_perf(1, 0xff01ff, regs, 17, &g), 0);
	CHECK_INT(g.r[0], 100); /* rax */
	CHECK_INT(g.r[3], 101); /* rbx */
	CHECK_INT(g.r[2], 102); /* rcx */
	CHECK_INT(g.r[1], 103); /* rdx */
	CHECK_INT(g.r[FG_CFI_RBP], 106);
	CHECK_INT(g.r[FG_CFI_RSP], 107);
	CHECK_INT(g.r[FG_CFI_RIP], 108);
	CHECK_INT(g.r[8], 109);
	CHECK_INT(g.r[15], 116);
	CHECK_INT(g.valid, (1u << 17) - 1);
	/* ip and sp only */
	uint64_t two[2] = {0x7000, 0x400000};
	CHECK_INT(fg_unwind_regs_from_perf(1, (1u << 7) | (1u << 8), two, 2, &g), 0);
	CHECK_INT(g.valid, FG_CFI_BIT(FG_CFI_RSP) | FG_CFI_BIT(FG_CFI_RIP));
	CHECK_INT(fg_unwind_regs_from_perf(2, 0xff01ff, regs, 17, &g), -EINVAL);
	CHECK_INT(fg_unwind_regs_from_perf(1, 0xff01ff, regs, 16, &g), -EINVAL);
	CHECK_INT(fg_unwind_regs_from_perf(1, 1u << 7, regs, 1, &g), -EINVAL);
	/* fg-sample's 20 (flags, cs and ss have no DWARF number here): as the general way */
	uint64_t twenty[FG_USTACK_NR_REGS];
	struct fg_cfi_regs h;

	for (int i = 0; i < FG_USTACK_NR_REGS; i++)
		twenty[i] = 200 + (uint64_t)i;
	CHECK_INT(fg_unwind_regs_from_perf(1, FG_USTACK_REGS_X86_64, twenty, FG_USTACK_NR_REGS, &g),
		  0);
	/* the same registers but flags, cs and ss, by the general way */
	memmove(&twenty[9], &twenty[12], 8 * sizeof(*twenty));
	CHECK_INT(fg_unwind_regs_from_perf(1, 0xff01ff, twenty, 17, &h), 0);
	CHECK_INT(memcmp(&g, &h, sizeof(g)), 0);
	CHECK_INT(g.r[FG_CFI_RIP], 208);
	CHECK_INT(g.r[8], 212);
	CHECK_INT(g.r[15], 219);
	CHECK_INT(g.valid, (1u << 17) - 1);
}

/* --- fg_unwind over a table made by hand --- */

/*
 * Code at 0x1000-0x1100: [0x1000, 0x1010) a function with CFA rsp+16 from
 * 0x1001, a STOP function at 0x1080; 0x5000-0x6000: code without CFI.
 */
static struct fg_cfi_row rows[] = {
    {0x000, 1}, {0x001, 2}, {0x010, 1}, {0x020, 4}, {0x030, 1}, {0x080, 3}, {0x100, 0},
};
static struct fg_cfi_rule rules[] = {
    {.kind = FG_CFI_NONE},
    {.kind = FG_CFI_NORMAL, .cfa_reg = FG_CFI_RSP, .cfa_off = 8, .ra = FG_CFI_AT_CFA, .ra_off = -8},
    {.kind = FG_CFI_NORMAL,
     .cfa_reg = FG_CFI_RSP,
     .cfa_off = 16,
     .ra = FG_CFI_AT_CFA,
     .ra_off = -8},
    {.kind = FG_CFI_STOP},
    /* 0x1020-0x1030: CFA rbp+16, the frame pointer's */
    {.kind = FG_CFI_NORMAL,
     .cfa_reg = FG_CFI_RBP,
     .cfa_off = 16,
     .rbp = FG_CFI_AT_CFA,
     .rbp_off = -16,
     .ra = FG_CFI_AT_CFA,
     .ra_off = -8},
};
static struct fg_cfi table = {
    .base = 0x1000,
    .rows = rows,
    .nrows = 7,
    .rules = rules,
    .nrules = 5,
};

static int find(void *arg, uint64_t pc, struct fg_unwind_map *m)
{
	(void)arg;
	if (pc >= 0x1000 && pc < 0x1200) {
		m->cfi = &table;
		m->bias = 0;
		return 0;
	}
	if (pc >= 0x5000 && pc < 0x6000) {
		m->cfi = NULL;
		return 0;
	}
	return -ENOENT;
}

TEST(unwind_leaf_exact_callers_one_back)
{
	struct fg_unwind_ops ops = {.find = find};
	struct fg_unwind_frame f[16];
	enum fg_unwind_end end;
	struct fg_cfi_regs g;
	uint64_t stack[8] = {0, 0x1010, 0, 0x5010, 0x7030, 0x1081, 0, 0};
	size_t n;

	/*
	 * The leaf at 0x1000 (CFA rsp+8): its return address 0x1010 starts the
	 * next row, but a caller is looked up one byte back, in the row of CFA
	 * rsp+16.  Then JIT code at 0x5010 by frame pointer, then a STOP row.
	 */
	regs_at(&g, 0x1000, 0x7000, 0x7020);
	stack[0] = 0x1010;
	stack[1] = 0;
	stack[2] = 0x5010; /* 0x7008 + 16 - 8 */
	stack[4] = 0x7040; /* at rbp 0x7020: the next rbp */
	stack[5] = 0x1081; /* at rbp + 8: the return address */
	n = fg_unwind(&ops, &g, 0x7000, stack, sizeof(stack), f, 16, &end);
	CHECK_INT(n, 4);
	CHECK_INT(end, FG_UNWIND_END_STOP);
	CHECK_INT(f[0].pc, 0x1000);
	CHECK_INT(f[0].flags, FG_UNWIND_F_EXACT);
	CHECK_INT(f[1].pc, 0x1010);
	CHECK_INT(f[1].flags, 0);
	CHECK_INT(f[2].pc, 0x5010);
	CHECK_INT(f[3].pc, 0x1081);
	CHECK_INT(f[3].flags, FG_UNWIND_F_FP);

	/* too deep */
	n = fg_unwind(&ops, &g, 0x7000, stack, sizeof(stack), f, 2, &end);
	CHECK_INT(n, 2);
	CHECK_INT(end, FG_UNWIND_END_MAXDEPTH);
	/* the snapshot ends first */
	n = fg_unwind(&ops, &g, 0x7000, stack, 16, f, 16, &end);
	CHECK_INT(end, FG_UNWIND_END_TRUNCATED);
	CHECK_INT(n, 2);
	/* no mapping */
	regs_at(&g, 0x9000, 0x7000, 0);
	n = fg_unwind(&ops, &g, 0x7000, stack, sizeof(stack), f, 16, &end);
	CHECK_INT(n, 1);
	CHECK_INT(end, FG_UNWIND_END_NOMAP);
	/* a file whose table says nothing there: rbp 0 in a leaf may be anything */
	regs_at(&g, 0x1100, 0x7000, 0);
	n = fg_unwind(&ops, &g, 0x7000, stack, sizeof(stack), f, 16, &end);
	CHECK_INT(n, 1);
	CHECK_INT(end, FG_UNWIND_END_NOINFO);
	/* at a return address there, rbp 0 is the outermost frame (ld.so's _start) */
	regs_at(&g, 0x1000, 0x7000, 0);
	stack[0] = 0x1101;
	n = fg_unwind(&ops, &g, 0x7000, stack, sizeof(stack), f, 16, &end);
	CHECK_INT(n, 2);
	CHECK_INT(f[1].pc, 0x1101);
	CHECK_INT(end, FG_UNWIND_END_STOP);
	/* and with another rbp, its frame pointer is followed (stack[3] is 0x5010) */
	regs_at(&g, 0x1000, 0x7000, 0x7010);
	n = fg_unwind(&ops, &g, 0x7000, stack, sizeof(stack), f, 16, &end);
	CHECK(n >= 3);
	CHECK_INT(f[2].pc, 0x5010);
}

TEST(unwind_loop_and_zero)
{
	struct fg_unwind_ops ops = {.find = find};
	struct fg_unwind_frame f[16];
	enum fg_unwind_end end;
	struct fg_cfi_regs g;
	/* frame pointers pointing at themselves */
	uint64_t stack[4] = {0x7000, 0x5000, 0, 0};
	size_t n;

	regs_at(&g, 0x5000, 0x7000, 0x6ff0);
	/* rbp 0x6ff0 is below the snapshot: unreadable */
	n = fg_unwind(&ops, &g, 0x7000, stack, sizeof(stack), f, 16, &end);
	CHECK_INT(end, FG_UNWIND_END_UNREADABLE);
	CHECK_INT(n, 1);
	/* a frame pointer chain that does not go up: a loop */
	stack[0] = 0x7000;
	stack[1] = 0x5008;
	regs_at(&g, 0x5000, 0x7010, 0x7000);
	n = fg_unwind(&ops, &g, 0x7000, stack, sizeof(stack), f, 16, &end);
	CHECK_INT(end, FG_UNWIND_END_LOOP);
	/* a return address of zero ends the stack without a frame for it */
	stack[0] = 0x7100;
	stack[1] = 0;
	regs_at(&g, 0x5000, 0x7000, 0x7000);
	n = fg_unwind(&ops, &g, 0x7000, stack, sizeof(stack), f, 16, &end);
	CHECK_INT(n, 1);
	CHECK_INT(end, FG_UNWIND_END_NOMAP);
}

/* find, counting its calls, with the code of 0x1000-0x1200 moved by `shift` (a new mapping) */
struct counted {
	int calls;
	uint64_t shift;
};

static int counted_find(void *arg, uint64_t pc, struct fg_unwind_map *m)
{
	struct counted *c = arg;
	int err;

	c->calls++;
	err = find(NULL, pc - c->shift, m);
	m->bias = c->shift;
	m->tag = 100 + c->shift;
	return err;
}

TEST(unwind_cache_by_space)
{
	struct fg_unwind_cache *cache = calloc(1, sizeof(*cache));
	struct counted c = {0, 0};
	uint64_t space = 1;
	struct fg_unwind_ops ops = {
	    .find = counted_find, .arg = &c, .cache = cache, .space = &space};
	struct fg_unwind_frame f[16];
	enum fg_unwind_end end;
	struct fg_cfi_regs g;
	uint64_t stack[4] = {0x1010, 0, 0x1081, 0};
	size_t n;

	CHECK(cache != NULL);
	/* 0x1000 (CFA rsp+8) <- 0x1010 (rsp+16) <- 0x1081 (STOP) */
	regs_at(&g, 0x1000, 0x7000, 0);
	n = fg_unwind(&ops, &g, 0x7000, stack, sizeof(stack), f, 16, &end);
	CHECK_INT(n, 3);
	CHECK_INT(end, FG_UNWIND_END_STOP);
	CHECK_INT(c.calls, 3);
	CHECK_INT(f[0].tag, 100);
	CHECK_INT(f[2].tag, 100);
	/* again in the same space: no find, the same frames */
	n = fg_unwind(&ops, &g, 0x7000, stack, sizeof(stack), f, 16, &end);
	CHECK_INT(n, 3);
	CHECK_INT(end, FG_UNWIND_END_STOP);
	CHECK_INT(c.calls, 3);
	CHECK_INT(f[1].pc, 0x1010);
	CHECK_INT(f[2].tag, 100);
	/* the code moved (a new mapping, a new space): 0x1000 is now in no mapping */
	space = 2;
	c.shift = 0x800;
	n = fg_unwind(&ops, &g, 0x7000, stack, sizeof(stack), f, 16, &end);
	CHECK_INT(c.calls, 4);
	CHECK_INT(n, 1);
	CHECK_INT(f[0].tag, 0);
	CHECK_INT(end, FG_UNWIND_END_NOMAP);
	/* a failed find is not cached: asked again */
	n = fg_unwind(&ops, &g, 0x7000, stack, sizeof(stack), f, 16, &end);
	CHECK_INT(c.calls, 5);
	/* back to the first space's code under a new space */
	space = 3;
	c.shift = 0;
	n = fg_unwind(&ops, &g, 0x7000, stack, sizeof(stack), f, 16, &end);
	CHECK_INT(n, 3);
	CHECK_INT(c.calls, 8);
	free(cache);
}

/* 0x1000 (CFA rsp+8) <- 0x1010 (rsp+16) <- 0x1081 (STOP): CFAs at sp+8, sp+0x18 */
static const uint64_t snap_a[8] = {0x1010, 0, 0x1081, 0, 0, 0, 0, 0};
/* the same leaf, one more frame of 0x1010's: CFAs at sp+8, +0x18, +0x28 (another return
 * address at sp+0x10) */
static const uint64_t snap_b[8] = {0x1010, 0, 0x1010, 0, 0x1081, 0, 0, 0};

/* The trail the walk from a leaf pc kept (tests only: by a look at every slot). */
static const struct fg_unwind_trail *trail_for(const struct fg_unwind_cache *c, uint64_t key,
					       uint64_t pc)
{
	for (size_t i = 0; i < FG_UNWIND_TRAIL_SLOTS; i++)
		if (c->trail[i].n && c->trail[i].key == key && c->trail[i].pc == pc)
			return &c->trail[i];
	return NULL;
}

/* fg_unwind with and without a cache, into *n: the same frames and end */
static void unwind_both(struct fg_unwind_ops *ops, const struct fg_cfi_regs *g,
			const uint64_t *stack, size_t size, struct fg_unwind_frame *f,
			enum fg_unwind_end *end, size_t *out)
{
	struct fg_unwind_ops plain = {.find = ops->find, .arg = ops->arg};
	struct fg_unwind_frame r[16];
	enum fg_unwind_end rend;
	size_t n, rn;

	rn = fg_unwind(&plain, g, 0x7000, stack, size, r, 16, &rend);
	n = fg_unwind(ops, g, 0x7000, stack, size, f, 16, end);
	*out = n;
	CHECK_INT(n, rn);
	CHECK_INT(*end, rend);
	for (size_t i = 0; i < n && i < rn; i++) {
		CHECK_INT(f[i].pc, r[i].pc);
		CHECK_INT(f[i].flags, r[i].flags);
	}
}

TEST(unwind_trails)
{
	struct fg_unwind_cache *cache = calloc(1, sizeof(*cache));
	uint64_t space = 1;
	struct fg_unwind_ops ops = {.find = find, .cache = cache, .space = &space};
	const struct fg_unwind_trail *t;
	struct fg_unwind_frame f[16];
	enum fg_unwind_end end;
	struct fg_cfi_regs g;
	size_t n;

	CHECK(cache != NULL);
	regs_at(&g, 0x1000, 0x7000, 0);
	/* no trail yet: the whole snapshot asked for, the trail kept */
	unwind_both(&ops, &g, snap_a, sizeof(snap_a), f, &end, &n);
	CHECK_INT(n, 3);
	CHECK_INT(end, FG_UNWIND_END_STOP);
	CHECK_INT(cache->trail_none, 1);
	t = trail_for(cache, 1, 0x1000);
	CHECK(t != NULL);
	CHECK_INT(t->n, 2);
	CHECK_INT(t->off[0], 8);
	CHECK_INT(t->off[1], 0x18);
	/* the same way again: followed */
	unwind_both(&ops, &g, snap_a, sizeof(snap_a), f, &end, &n);
	CHECK_INT(n, 3);
	CHECK_INT(cache->trail_kept, 1);
	/* another way from the same leaf: left at its third frame, the same frames */
	unwind_both(&ops, &g, snap_b, sizeof(snap_b), f, &end, &n);
	CHECK_INT(n, 4);
	CHECK_INT(end, FG_UNWIND_END_STOP);
	CHECK_INT(cache->trail_left, 1);
	t = trail_for(cache, 1, 0x1000);
	CHECK_INT(t->n, 3);
	CHECK_INT(t->off[2], 0x28);
	unwind_both(&ops, &g, snap_b, sizeof(snap_b), f, &end, &n);
	CHECK_INT(n, 4);
	CHECK_INT(cache->trail_kept, 2);
	/* a trail that leads wrong still gives the right frames */
	unwind_both(&ops, &g, snap_a, sizeof(snap_a), f, &end, &n);
	CHECK_INT(n, 3);
	CHECK_INT(cache->trail_kept, 3); /* a shorter way along it */
	CHECK_INT(trail_for(cache, 1, 0x1000)->n, 2);
	/* a snapshot cut short: the trail ends with it (no CFA past its end) */
	unwind_both(&ops, &g, snap_b, 16, f, &end, &n);
	CHECK_INT(n, 2);
	CHECK_INT(end, FG_UNWIND_END_TRUNCATED);
	CHECK_INT(trail_for(cache, 1, 0x1000)->n, 1);
	/* another space: no trail of this one */
	space = 2;
	unwind_both(&ops, &g, snap_b, sizeof(snap_b), f, &end, &n);
	CHECK_INT(n, 4);
	CHECK_INT(cache->trail_none, 2);
	CHECK(trail_for(cache, 2, 0x1000) != NULL);
	free(cache);
}

TEST(unwind_trail_replays)
{
	struct fg_unwind_cache *cache = calloc(1, sizeof(*cache));
	uint64_t space = 1;
	struct fg_unwind_ops ops = {.find = find, .cache = cache, .space = &space};
	struct fg_unwind_frame f[16];
	enum fg_unwind_end end;
	struct fg_cfi_regs g;
	size_t n;
	/* 0x1020 (CFA rbp+16) <- 0x1081 (STOP): where it reads depends on rbp */
	uint64_t c[8] = {0, 0x1081, 0, 0, 0, 0, 0, 0};
	/* frame pointers (code without CFI) <- 0x1081 */
	uint64_t d[8] = {0x7020, 0x1081, 0, 0, 0, 0, 0, 0};

	CHECK(cache != NULL);
	regs_at(&g, 0x1000, 0x7000, 0);
	unwind_both(&ops, &g, snap_a, sizeof(snap_a), f, &end, &n);
	CHECK_INT(n, 3);
	CHECK_INT(trail_for(cache, 1, 0x1000)->nframes, 3);
	CHECK_INT(cache->replayed, 0);
	/* the same words where it read: replayed, whatever the other registers */
	regs_at(&g, 0x1000, 0x7000, 0x1234);
	unwind_both(&ops, &g, snap_a, sizeof(snap_a), f, &end, &n);
	CHECK_INT(n, 3);
	CHECK_INT(end, FG_UNWIND_END_STOP);
	CHECK_INT(f[1].pc, 0x1010);
	CHECK_INT(f[2].pc, 0x1081);
	CHECK_INT(cache->replayed, 1);
	/* another return address there: walked, not replayed */
	unwind_both(&ops, &g, snap_b, sizeof(snap_b), f, &end, &n);
	CHECK_INT(n, 4);
	CHECK_INT(cache->replayed, 1);
	unwind_both(&ops, &g, snap_b, sizeof(snap_b), f, &end, &n);
	CHECK_INT(n, 4);
	CHECK_INT(cache->replayed, 2);
	/* another snapshot size: walked (where it ends may differ) */
	unwind_both(&ops, &g, snap_b, 32, f, &end, &n);
	CHECK_INT(n, 3);
	CHECK_INT(end, FG_UNWIND_END_TRUNCATED);
	CHECK_INT(cache->replayed, 2);
	/* cut short, and replayed cut short */
	unwind_both(&ops, &g, snap_b, 32, f, &end, &n);
	CHECK_INT(n, 3);
	CHECK_INT(end, FG_UNWIND_END_TRUNCATED);
	CHECK_INT(cache->replayed, 3);
	/* another max: walked; then replayed at that max */
	n = fg_unwind(&ops, &g, 0x7000, snap_b, sizeof(snap_b), f, 2, &end);
	CHECK_INT(n, 2);
	CHECK_INT(end, FG_UNWIND_END_MAXDEPTH);
	CHECK_INT(cache->replayed, 3);
	n = fg_unwind(&ops, &g, 0x7000, snap_b, sizeof(snap_b), f, 2, &end);
	CHECK_INT(n, 2);
	CHECK_INT(end, FG_UNWIND_END_MAXDEPTH);
	CHECK_INT(f[1].pc, 0x1010);
	CHECK_INT(cache->replayed, 4);
	/* rsp a word into the copy: the walk reads a word on, so walked, not replayed */
	unwind_both(&ops, &g, snap_b, sizeof(snap_b), f, &end, &n);
	CHECK_INT(cache->replayed, 4); /* (the trail's max was 2) */
	regs_at(&g, 0x1000, 0x7008, 0x1234);
	unwind_both(&ops, &g, snap_b, sizeof(snap_b), f, &end, &n);
	CHECK_INT(cache->replayed, 4);
	/* a CFA on rbp: never replayed */
	regs_at(&g, 0x1020, 0x7000, 0x7000);
	unwind_both(&ops, &g, c, sizeof(c), f, &end, &n);
	CHECK_INT(n, 2);
	CHECK_INT(end, FG_UNWIND_END_STOP);
	CHECK_INT(trail_for(cache, 1, 0x1020)->nframes, 0);
	/* the same pcs and words, rbp elsewhere: the walk reads elsewhere, and ends otherwise */
	regs_at(&g, 0x1020, 0x7000, 0x6000);
	unwind_both(&ops, &g, c, sizeof(c), f, &end, &n);
	CHECK_INT(n, 1);
	CHECK_INT(end, FG_UNWIND_END_UNREADABLE);
	CHECK_INT(cache->replayed, 4);
	/* frame pointers: never replayed */
	regs_at(&g, 0x5000, 0x7000, 0x7000);
	unwind_both(&ops, &g, d, sizeof(d), f, &end, &n);
	CHECK_INT(n, 2);
	CHECK_INT(trail_for(cache, 1, 0x5000)->nframes, 0);
	unwind_both(&ops, &g, d, sizeof(d), f, &end, &n);
	CHECK_INT(cache->replayed, 4);
	free(cache);
}

/* --- this very process: its stack unwound by the tables and by libdwfl --- */

struct self_map {
	uint64_t start, end, pgoff;
	char path[512];
	struct fg_cfi *cfi;
	int err;
};

static struct self_map maps[256];
static size_t nmaps;

static int self_map_fn(const struct fg_procmap *pm, void *arg)
{
	(void)arg;
	if (!pm->exec || nmaps == 256)
		return 0;
	maps[nmaps].start = pm->start;
	maps[nmaps].end = pm->end;
	maps[nmaps].pgoff = pm->pgoff;
	snprintf(maps[nmaps].path, sizeof(maps[nmaps].path), "%s", pm->path);
	nmaps++;
	return 0;
}

static int self_find(void *arg, uint64_t pc, struct fg_unwind_map *um)
{
	(void)arg;
	for (size_t i = 0; i < nmaps; i++) {
		struct self_map *m = &maps[i];
		uint64_t vaddr;

		if (pc < m->start || pc >= m->end)
			continue;
		if (!m->cfi && !m->err) {
			if (strcmp(m->path, "[vdso]") == 0) {
				m->cfi = fg_cfi_open_mem((const void *)m->start, m->end - m->start);
			} else {
				int fd = fg_safeio_open_regular(m->path, 0, NULL);

				m->cfi = fd >= 0 ? fg_cfi_open_fd(fd, -1) : NULL;
				if (fd >= 0)
					close(fd);
			}
			m->err = m->cfi ? 0 : -ENOENT;
		}
		if (!m->cfi)
			return -EIO;
		if (!fg_cfi_offset_to_vaddr(m->cfi, pc - m->start + m->pgoff, &vaddr))
			return -ENOEXEC;
		um->cfi = m->cfi;
		um->bias = pc - vaddr;
		return 0;
	}
	return -ENOENT;
}

static uint8_t snap_data[16384];

/* The registers here and a copy of the stack from here up, as fg-sample would take them. */
__attribute__((noinline)) static size_t snapshot(struct fg_cfi_regs *g)
{
	uint64_t ip, sp, bp;

#if defined(__aarch64__)
	uint64_t lr;

	__asm__ volatile("adr %0, .\n\tmov %1, sp\n\tmov %2, x29\n\tmov %3, x30"
			 : "=r"(ip), "=r"(sp), "=r"(bp), "=r"(lr));
	regs_at(g, ip, sp, bp);
	g->r[FG_CFI_A64_LR] = lr;
	g->valid |= FG_CFI_BIT(FG_CFI_A64_LR);
	g->arch = FG_CFI_ARCH_ARM64;
#else
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	regs_at(g, ip, sp, bp);
#endif
	return snap_copy(snap_data, sp, sizeof(snap_data));
}

__attribute__((noinline)) static size_t deeper(struct fg_cfi_regs *g, int n)
{
	size_t r = n ? deeper(g, n - 1) : snapshot(g);

	__asm__ volatile("" : "+r"(r));
	return r;
}

TEST(unwind_this_process_as_libdwfl_does)
{
	struct fg_unwind_ops ops = {.find = self_find};
	struct fg_unwind_frame f[128], d[128];
	enum fg_unwind_end end, dend;
	struct fg_cfi_regs g;
	struct fg_unwind_dw *dw;
	const char *msg;
	size_t size, n, dn;
	char *text;
	size_t len;

	CHECK(fg_safeio_read_file("/proc/self/maps", 1 << 20, &text, &len) == 0);
	fg_procmaps_parse(text, len, self_map_fn, NULL, NULL);
	free(text);
	size = deeper(&g, 10);
	CHECK(size > 256);
	n = fg_unwind(&ops, &g, g.r[FG_CFI_RSP], snap_data, size, f, 128, &end);
	/* snapshot, deeper x 11, this test, main, libc's start, _start */
	CHECK_INT(end, FG_UNWIND_END_STOP);
	CHECK(n >= 15);
	dw = fg_unwind_dw_new();
	CHECK(dw);
	for (size_t i = 0; i < nmaps; i++) {
		if (strcmp(maps[i].path, "[vdso]") == 0) {
			fg_unwind_dw_map_image(dw, "[vdso]", (const void *)maps[i].start,
					       maps[i].end - maps[i].start, maps[i].start);
			continue;
		}
		int fd = fg_safeio_open_regular(maps[i].path, 0, NULL);
		if (fd >= 0) {
			fg_unwind_dw_map(dw, maps[i].path, fd, maps[i].start, maps[i].end,
					 maps[i].pgoff);
			close(fd);
		}
	}
	dn = fg_unwind_dw(dw, (uint32_t)getpid(), &g, g.r[FG_CFI_RSP], snap_data, size, d, 128,
			  &dend, &msg);
	fg_unwind_dw_free(dw);
	CHECK_INT(dend, FG_UNWIND_END_STOP);
	CHECK_INT(dn, n);
	for (size_t i = 0; i < n; i++)
		CHECK_INT(d[i].pc, f[i].pc);
	for (size_t i = 0; i < nmaps; i++)
		fg_cfi_free(maps[i].cfi);
}

int main(void)
{
	RUN(step_cfa_rules);
	RUN(step_rbx_saved_then_cfa_on_rbx);
	RUN(step_ends);
	RUN(step_signal_frame_and_frame_pointer);
	RUN(step_aarch64);
	RUN(regs_from_perf_arm64);
	RUN(regs_from_perf_order);
	RUN(unwind_leaf_exact_callers_one_back);
	RUN(unwind_loop_and_zero);
	RUN(unwind_cache_by_space);
	RUN(unwind_trails);
	RUN(unwind_trail_replays);
	RUN(unwind_this_process_as_libdwfl_does);
	return unit_done();
}
