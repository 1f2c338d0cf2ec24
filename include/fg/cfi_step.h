/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The layout of a compact unwind table (lib/cfi.c builds it) and the step
 * function that applies one of its rules to a register set.  This header is
 * shared by user space (lib/unwind.c) and the BPF program (bpf/cfi_unwind.h): it uses
 * only __u8..__u64 types, no libc, no loops without a fixed bound and no
 * function pointers, so that both unwinders run the very same code.
 *
 * A table is two arrays:
 *
 *	rows[nrows]	struct fg_cfi_row, 8 bytes, sorted by pc.  A row covers
 *			[rows[i].pc, rows[i + 1].pc); pc is relative to the
 *			table's base (a file address, before the load bias).
 *			The last row is a FG_CFI_NONE row closing the table.
 *	rules[nrules]	struct fg_cfi_rule, 20 bytes, deduplicated: rows name
 *			them by index.  rules[0] is always FG_CFI_NONE (no
 *			information: a gap between functions).
 *
 * x86-64 and arm64.  Registers are numbered as x86-64's DWARF numbers them:
 * 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15, 16
 * the return address (rip).  An arm64 table (lib/cfi compiles its DWARF
 * numbers so) holds its registers in the slots of the same roles: sp in rsp's
 * (7), the frame pointer x29 in rbp's (6), the pc in rip's (16), and the link
 * register x30 in rbx's (3); a register set says which (fg_cfi_regs.arch).
 *
 * Memory is read through FG_CFI_READ(ctx, addr, &val), which returns 0 or one
 * of FG_CFI_END_TRUNCATED (past the end of a stack snapshot) and
 * FG_CFI_END_UNREADABLE.  Define FG_CFI_CTX and FG_CFI_READ before including
 * this header to read another way (BPF: bpf_probe_read_user or a copy in a
 * map); by default ctx is a struct fg_cfi_mem with a read function.
 */
#ifndef FG_CFI_STEP_H
#define FG_CFI_STEP_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define FG_CFI_NREGS 17
#define FG_CFI_RBX 3
#define FG_CFI_RBP 6
#define FG_CFI_RSP 7
#define FG_CFI_RIP 16
/* arm64's registers in those slots */
#define FG_CFI_A64_LR FG_CFI_RBX
#define FG_CFI_A64_FP FG_CFI_RBP
#define FG_CFI_A64_SP FG_CFI_RSP
#define FG_CFI_A64_PC FG_CFI_RIP

/* The machine a register set and a table are of. */
enum fg_cfi_arch {
	FG_CFI_ARCH_X86_64 = 0,
	FG_CFI_ARCH_ARM64 = 1,
};

/*
 * arm64's pointer authentication signs return addresses saved on the stack in
 * their top bits; a user address has its bits 48-63 clear (48-bit virtual
 * addresses, what Linux gives user space unless it asks for more).
 */
#define FG_CFI_PAC_MASK 0x0000ffffffffffffull

/* What a row says. */
enum fg_cfi_kind {
	FG_CFI_NONE = 0, /* no unwind information for these addresses */
	FG_CFI_NORMAL,	 /* CFA, rbp and the return address as the rule says */
	FG_CFI_STOP,	 /* the return address is undefined: the outermost frame */
	FG_CFI_SIGNAL,	 /* a signal trampoline (CIE augmentation "S"): the registers
			    are in the ucontext at rsp (__restore_rt) */
	FG_CFI_INVALID,	 /* a rule this layout cannot hold; arg0 says why (fg_cfi_why) */
};

/* How the CFA (the caller's rsp) is found. */
enum fg_cfi_cfa {
	FG_CFI_CFA_REG = 0, /* cfa = reg[cfa_reg] + cfa_off */
	FG_CFI_CFA_DEREF,   /* cfa = *(reg[cfa_reg] + cfa_off): expression "bregN off; deref"
			       (stack realignment) */
	FG_CFI_CFA_PLT,	    /* cfa = rsp + cfa_off + ((rip & arg0) >= arg1 ? 8 : 0):
			       the expression of a PLT (lazy binding pushes one word) */
};

/*
 * Where a register of the caller is (rbp, rbx, the return address).  rbx is
 * held beside rbp because hand-written code computes the CFA from it
 * (glibc's _dl_runtime_resolve, which realigns the stack): the frames
 * below must give it back.
 */
enum fg_cfi_save {
	FG_CFI_SAME = 0, /* unchanged (same value, or no rule) */
	FG_CFI_AT_CFA,	 /* saved at cfa + off */
	FG_CFI_VAL_CFA,	 /* the value is cfa + off */
	FG_CFI_AT_REG,	 /* saved at reg[rbp_reg] + off: expression "bregN off" (rbp only) */
	FG_CFI_UNDEF,	 /* undefined */
	FG_CFI_LOST,	 /* a rule not held here (another register, an expression):
			    the value is unknown after the step */
};

/* Why a row is FG_CFI_INVALID (rule.arg0); lib/cfi counts them. */
enum fg_cfi_why {
	FG_CFI_WHY_NONE = 0,
	FG_CFI_WHY_CFA_EXPR,  /* a CFA expression other than the forms above */
	FG_CFI_WHY_CFA_REG,   /* the CFA on a register that is not 0-16 */
	FG_CFI_WHY_RA_RULE,   /* the return address neither at cfa + off nor undefined */
	FG_CFI_WHY_RA_COLUMN, /* the CIE's return address column is not 16 */
	FG_CFI_WHY_RANGE,     /* an offset too large for the row's fields */
	FG_CFI_WHY_OP,	      /* an unknown or malformed CFA instruction */
	FG_CFI_WHY_STATE,     /* DW_CFA_restore_state without remember, or too deep */
	FG_CFI_WHY_ARCH,      /* a rule this machine's step does not take (an arm64 signal frame) */
	FG_CFI_WHY_COUNT,
};

struct fg_cfi_row {
	__u32 pc;   /* first address, relative to the table's base */
	__u32 rule; /* index into rules[] */
};

struct fg_cfi_rule {
	__u8 kind;    /* enum fg_cfi_kind */
	__u8 cfa;     /* enum fg_cfi_cfa */
	__u8 cfa_reg; /* the register the CFA is computed from */
	__u8 rbp;     /* enum fg_cfi_save: the caller's rbp */
	__u8 ra;      /* enum fg_cfi_save: the return address (FG_CFI_AT_CFA in a NORMAL row;
			 arm64: or FG_CFI_SAME, still in the link register) */
	__u8 rbp_reg; /* with rbp FG_CFI_AT_REG: the register */
	__u8 arg0;    /* FG_CFI_CFA_PLT: the mask; FG_CFI_INVALID: enum fg_cfi_why */
	__u8 arg1;    /* FG_CFI_CFA_PLT: the threshold */
	__s32 cfa_off;
	__s16 rbp_off;
	__s16 ra_off;
	__u8 rbx;   /* enum fg_cfi_save: the caller's rbx (arm64: x30), not FG_CFI_AT_REG */
	__u8 flags; /* FG_CFI_RULE_F_* */
	__s16 rbx_off;
};

/* the return address was signed (arm64's DW_CFA_AARCH64_negate_ra_state): strip it */
#define FG_CFI_RULE_F_PAC (1u << 0)

/* A register set: r[i] is known when bit i of valid is set. */
struct fg_cfi_regs {
	__u64 r[FG_CFI_NREGS];
	__u32 valid;
	__u32 arch; /* enum fg_cfi_arch: which registers the slots hold */
};

/* Results of a step: FG_CFI_OK* go on, the others end the walk. */
enum fg_cfi_result {
	FG_CFI_OK = 0,	      /* the caller's registers are in place; its pc is a return address */
	FG_CFI_OK_EXACT,      /* from a signal frame: the caller's pc is where it was interrupted */
	FG_CFI_END_STOP,      /* the outermost frame (_start, a thread's start) */
	FG_CFI_END_NOINFO,    /* no unwind information for the pc */
	FG_CFI_END_INVALID,   /* a rule lib/cfi cannot hold */
	FG_CFI_END_NOREG,     /* the rule needs a register that is not known */
	FG_CFI_END_TRUNCATED, /* a read past the end of the stack snapshot */
	FG_CFI_END_UNREADABLE, /* a read of memory that cannot be read */
};

#ifndef FG_CFI_READ
struct fg_cfi_mem {
	/* 0, FG_CFI_END_TRUNCATED or FG_CFI_END_UNREADABLE */
	int (*read)(const struct fg_cfi_mem *m, __u64 addr, __u64 *val);
};
#define FG_CFI_CTX const struct fg_cfi_mem
#define FG_CFI_READ(ctx, addr, val) ((ctx)->read((ctx), (addr), (val)))
#endif

#define FG_CFI_BIT(r) (1u << (r))

/* how the functions below are declared: BPF wants them inlined (a BPF call takes 5 arguments) */
#ifndef FG_CFI_INLINE
#define FG_CFI_INLINE static inline
#endif

/*
 * The registers saved by the kernel in a signal frame: struct ucontext at rsp
 * (the trampoline's rsp once the handler returned), its mcontext gregs from
 * byte 40, in the order r8-r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip
 * (the kernel's struct sigcontext).  Here as DWARF numbers.
 */
#define FG_CFI_UC_GREGS 40
static const __u8 fg_cfi_uc_order[FG_CFI_NREGS] = {8, 9, 10, 11, 12, 13, 14, 15, 5,
						   4, 6, 3,  1,	 0,  2,	 7,  16};

FG_CFI_INLINE int fg_cfi_step_signal(struct fg_cfi_regs *g, FG_CFI_CTX *ctx)
{
	struct fg_cfi_regs n;
	__u64 uc;
	int i, e;

	if (!(g->valid & FG_CFI_BIT(FG_CFI_RSP)))
		return FG_CFI_END_NOREG;
	uc = g->r[FG_CFI_RSP] + FG_CFI_UC_GREGS;
	n.valid = 0;
	n.arch = g->arch;
	for (i = 0; i < FG_CFI_NREGS; i++) {
		e = FG_CFI_READ(ctx, uc + 8 * (__u64)i, &n.r[fg_cfi_uc_order[i]]);
		if (e)
			return e;
	}
	n.valid = (1u << FG_CFI_NREGS) - 1;
	*g = n;
	return FG_CFI_OK_EXACT;
}

/*
 * A register of the caller (rbp: reg 6, rbx: reg 3) saved as `how` says:
 * 1 when known (in *val), 0 when not.  A read that fails leaves it unknown
 * rather than ending the walk, as libdwfl does: in an epilogue the CFI still
 * places rbp where it was saved, below a stack pointer that has moved past
 * it (outside a snapshot taken from rsp), and only a caller that needs rbp
 * suffers.
 */
FG_CFI_INLINE int fg_cfi_restore(__u8 how, __s16 off, __u8 at_reg, int reg,
				 const struct fg_cfi_regs *g, __u64 cfa, __u64 *val,
				 FG_CFI_CTX *ctx)
{
	switch (how) {
	case FG_CFI_SAME:
		*val = g->r[reg];
		return !!(g->valid & FG_CFI_BIT(reg));
	case FG_CFI_AT_CFA:
		return FG_CFI_READ(ctx, cfa + (__u64)(__s64)off, val) == 0;
	case FG_CFI_VAL_CFA:
		*val = cfa + (__u64)(__s64)off;
		return 1;
	case FG_CFI_AT_REG:
		if (at_reg >= FG_CFI_NREGS || !(g->valid & FG_CFI_BIT(at_reg)))
			return 0;
		return FG_CFI_READ(ctx, g->r[at_reg] + (__u64)(__s64)off, val) == 0;
	default:
		return 0;
	}
}

/*
 * Apply rule `r` (the row holding the frame's pc) to `g`: on FG_CFI_OK or
 * FG_CFI_OK_EXACT, g holds the caller's registers (rip, rsp, and rbp and
 * rbx when known; every register after a signal frame).  On an end result g
 * is unchanged.
 */
FG_CFI_INLINE int fg_cfi_step(const struct fg_cfi_rule *r, struct fg_cfi_regs *g, FG_CFI_CTX *ctx)
{
	__u64 base, cfa, ra, rbp = 0, rbx = 0;
	int e, known_rbp, known_rbx;

	switch (r->kind) {
	case FG_CFI_NORMAL:
		break;
	case FG_CFI_STOP:
		return FG_CFI_END_STOP;
	case FG_CFI_SIGNAL:
		return fg_cfi_step_signal(g, ctx);
	case FG_CFI_INVALID:
		return FG_CFI_END_INVALID;
	default:
		return FG_CFI_END_NOINFO;
	}
	if (r->cfa_reg >= FG_CFI_NREGS || !(g->valid & FG_CFI_BIT(r->cfa_reg)))
		return FG_CFI_END_NOREG;
	base = g->r[r->cfa_reg] + (__u64)(__s64)r->cfa_off;
	switch (r->cfa) {
	case FG_CFI_CFA_REG:
		cfa = base;
		break;
	case FG_CFI_CFA_DEREF:
		e = FG_CFI_READ(ctx, base, &cfa);
		if (e)
			return e;
		break;
	case FG_CFI_CFA_PLT:
		if (!(g->valid & FG_CFI_BIT(FG_CFI_RIP)))
			return FG_CFI_END_NOREG;
		cfa = base + ((g->r[FG_CFI_RIP] & r->arg0) >= r->arg1 ? 8 : 0);
		break;
	default:
		return FG_CFI_END_INVALID;
	}
	if (r->ra == FG_CFI_AT_CFA) {
		e = FG_CFI_READ(ctx, cfa + (__u64)(__s64)r->ra_off, &ra);
		if (e)
			return e;
	} else if (r->ra == FG_CFI_SAME) {
		/* arm64: not saved yet (a leaf, a prologue), in the link register */
		if (!(g->valid & FG_CFI_BIT(FG_CFI_A64_LR)))
			return FG_CFI_END_NOREG;
		ra = g->r[FG_CFI_A64_LR];
	} else {
		return FG_CFI_END_INVALID;
	}
	if (r->flags & FG_CFI_RULE_F_PAC)
		ra &= FG_CFI_PAC_MASK;
	known_rbp = fg_cfi_restore(r->rbp, r->rbp_off, r->rbp_reg, FG_CFI_RBP, g, cfa, &rbp, ctx);
	known_rbx = fg_cfi_restore(r->rbx, r->rbx_off, FG_CFI_NREGS, FG_CFI_RBX, g, cfa, &rbx, ctx);
	g->r[FG_CFI_RIP] = ra;
	g->r[FG_CFI_RSP] = cfa;
	g->r[FG_CFI_RBP] = rbp;
	g->r[FG_CFI_RBX] = rbx;
	g->valid = FG_CFI_BIT(FG_CFI_RIP) | FG_CFI_BIT(FG_CFI_RSP) |
		   (known_rbp ? FG_CFI_BIT(FG_CFI_RBP) : 0) |
		   (known_rbx ? FG_CFI_BIT(FG_CFI_RBX) : 0);
	return FG_CFI_OK;
}

/*
 * A frame-pointer step, for code without unwind information (JIT code):
 * the caller's rbp at rbp, its return address at rbp + 8, its rsp rbp + 16.
 * arm64's frame record is the same pair, x29 and x30, at x29.
 */
FG_CFI_INLINE int fg_cfi_step_fp(struct fg_cfi_regs *g, FG_CFI_CTX *ctx)
{
	__u64 fp, ra, nfp;
	int e;

	if (!(g->valid & FG_CFI_BIT(FG_CFI_RBP)))
		return FG_CFI_END_NOREG;
	fp = g->r[FG_CFI_RBP];
	e = FG_CFI_READ(ctx, fp, &nfp);
	if (e)
		return e;
	e = FG_CFI_READ(ctx, fp + 8, &ra);
	if (e)
		return e;
	if (g->arch == FG_CFI_ARCH_ARM64) /* arm64's frame record {x29, x30}: x30 maybe signed */
		ra &= FG_CFI_PAC_MASK;
	g->r[FG_CFI_RIP] = ra;
	g->r[FG_CFI_RSP] = fp + 16;
	g->r[FG_CFI_RBP] = nfp;
	g->valid = FG_CFI_BIT(FG_CFI_RIP) | FG_CFI_BIT(FG_CFI_RSP) | FG_CFI_BIT(FG_CFI_RBP);
	return FG_CFI_OK;
}

/*
 * Whether a frame pointer of zero, where the walk would follow frame pointers,
 * is the outermost frame (the x86-64 ABI's mark): in code without CFI, and at
 * a return address in a gap of a file's CFI (ld.so's _start calling
 * _dl_start, rbp still the 0 of the exec).  In a gap at an exact pc (a leaf)
 * rbp may hold anything: only the end of what can be known.  Both walks,
 * lib/unwind's and the BPF program's, end by it.
 */
FG_CFI_INLINE int fg_cfi_rbp0_outermost(int in_gap, int exact)
{
	return !in_gap || !exact;
}

/*
 * The rows are read through FG_CFI_ROW_PC(rows, i), the pc of row i, and
 * FG_CFI_ROWS, the type `rows` points to: by default an array of struct
 * fg_cfi_row; the BPF program defines them to read the rows of a table from
 * its map.
 */
#ifndef FG_CFI_ROW_PC
#define FG_CFI_ROWS const struct fg_cfi_row
#define FG_CFI_ROW_PC(rows, i) ((rows)[i].pc)
#endif

/*
 * One halving of the search for the row holding `pc` in [*lo, *hi): 1 when
 * the search is over (the row is *lo - 1), 0 to go on.  A step of its own,
 * so that the BPF program runs it in a bpf_loop() (a loop inside its walk's
 * loop would make the verifier explore every path of both).
 */
FG_CFI_INLINE int fg_cfi_find_halve(FG_CFI_ROWS *rows, __u32 nrows, __u32 pc, __u32 *lo, __u32 *hi)
{
	__u32 mid;

	if (*lo >= *hi)
		return 1;
	mid = *lo + (*hi - *lo) / 2;
	if (mid >= nrows) /* never true; tells the BPF verifier the index is in bounds */
		return 1;
	if (FG_CFI_ROW_PC(rows, mid) <= pc)
		*lo = mid + 1;
	else
		*hi = mid;
	return 0;
}

/* The row holding `pc` (relative to the table's base): its index, or -1 before the first. */
FG_CFI_INLINE long fg_cfi_find_row(FG_CFI_ROWS *rows, __u32 nrows, __u32 pc)
{
	__u32 lo = 0, hi = nrows;
	int i;

	/* 32 halvings cover any __u32 count */
	for (i = 0; i < 32; i++)
		if (fg_cfi_find_halve(rows, nrows, pc, &lo, &hi))
			break;
	return (long)lo - 1;
}

#endif
