/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One step of the kernel's ORC unwinder (x86-64): from a frame of a kernel
 * stack to its caller's, with the kernel's ORC tables as fg/korc.h builds
 * them.  Shared by user space (lib/korc.c, and the unit tests, which walk
 * made-up stacks) and fg-sample's BPF program (bpf/korc_unwind.h), which
 * unwinds the kernel stack of a tracepoint's event with it rather than with
 * bpf_get_stack(): only __u8..__u64 types, no libc, loops with fixed bounds.
 *
 * The step follows the kernel's unwind_next_frame() (arch/x86/kernel/
 * unwind_orc.c) rule for rule, so that the frames are the ones the kernel's
 * unwinder gives bpf_get_stack(): the entry of the return address less one
 * (the address itself after an interrupt's registers: "signal"), the
 * caller's stack pointer from sp, bp or a word they point to, then the
 * return address below it (CALL), or the registers saved on the stack
 * (REGS: a pt_regs; REGS_PARTIAL: an iret frame).  Registers saved in user
 * mode end the stack, as does an END_OF_STACK or UNDEFINED entry (the
 * kernel stops there too).  What this step does not follow gives up, and
 * the caller takes the stack from the kernel's unwinder instead:
 *
 *	FG_KORC_FB_TEXT		an address outside vmlinux's text (a module,
 *				BPF code, a trampoline, init text), whose ORC
 *				entries are elsewhere or none
 *	FG_KORC_FB_OTHER	a word that cannot be read, a return address a
 *				tracer replaced, a stack pointer going down
 *				(the kernel checks it against the stack's
 *				bounds, which are not known here)
 *
 * Memory is read through FG_KORC_READ(ctx, addr, &val), 0 or -1; the
 * table's entries through FG_KORC_ENTRY(ctx, i) and their rules through
 * FG_KORC_RULE(ctx, i) (pointers, or NULL), its block index through
 * FG_KORC_BLOCK(ctx, i, &val), 0 or -1.  Define them and
 * FG_KORC_CTX before including this header (BPF: map lookups and
 * bpf_probe_read_kernel); by default ctx is a struct fg_korc_mem.  With
 * FG_KORC_TYPES_ONLY defined, only the types are declared.
 */
#ifndef FG_KORC_STEP_TYPES
#define FG_KORC_STEP_TYPES

#ifndef __VMLINUX_H__
#include <stdbool.h>
#endif

#include "fg/bpf_abi.h"

/* the tables, and the addresses the kernel may have put in place of return addresses */
struct fg_korc_info {
	__u64 text_start, text_end; /* _stext, _etext */
	__u32 nr, nblocks;	    /* entries, blocks of the index */
	__u64 graph_ret, rethook;   /* return_to_handler, arch_rethook_trampoline; or 0 */
};

/* a frame: the kernel's struct unwind_state, less the stack's bounds */
struct fg_korc_state {
	__u64 ip, sp, bp;
	__u64 regs;	 /* the pt_regs of the latest REGS frame (or an iret frame's, less 128) */
	__u64 prev_regs; /* the full pt_regs before an iret frame */
	__u8 signal;	 /* ip is where an interrupt stopped, not a return address */
	__u8 full_regs;
};

enum fg_korc_result {
	FG_KORC_NEXT,	  /* the caller's frame, now in the state: ip is a frame of the stack */
	FG_KORC_DONE,	  /* the stack ends here, as the kernel's unwinder ends it */
	FG_KORC_FB_TEXT,  /* fall back: an address outside vmlinux's text */
	FG_KORC_FB_OTHER, /* fall back: anything else this step does not follow */
};

/* offsets in struct pt_regs (x86-64) */
#define FG_PTREGS_BP 32
#define FG_PTREGS_R13 16
#define FG_PTREGS_R10 56
#define FG_PTREGS_DX 96
#define FG_PTREGS_DI 112
#define FG_PTREGS_IP 128 /* the iret frame: ip, cs, flags, sp, ss */
#define FG_PTREGS_CS 136
#define FG_PTREGS_FLAGS 144
#define FG_PTREGS_SP 152
#define FG_EFLAGS_FIXED 2ull /* set in registers an interrupt saved, not in perf's made-up ones */
#define FG_KERNEL_SPACE 0xffff800000000000ull

#endif

/* FG_KORC_TYPES_ONLY: the types alone, for a program that defines the reads later */
#if !defined(FG_KORC_TYPES_ONLY) && !defined(FG_KORC_STEP_H)
#define FG_KORC_STEP_H

#ifndef FG_KORC_READ
struct fg_korc_mem {
	const struct fg_korc_entry *e;
	const struct fg_korc_rule *rules;
	__u32 nrules;
	const __u32 *lookup;
	int (*read)(const struct fg_korc_mem *m, __u64 addr, __u64 *val);
	void *arg;
};
#define FG_KORC_CTX const struct fg_korc_mem
#define FG_KORC_READ(ctx, addr, val) ((ctx)->read((ctx), (addr), (val)))
#define FG_KORC_ENTRY(ctx, i) (&(ctx)->e[(i)])
#define FG_KORC_RULE(ctx, i) ((i) < (ctx)->nrules ? &(ctx)->rules[(i)] : (void *)0)
#define FG_KORC_BLOCK(ctx, i, val) (*(val) = (ctx)->lookup[(i)], 0)
#endif

#ifndef FG_KORC_INLINE
#define FG_KORC_INLINE static inline
#endif

/*
 * The entry for the text at offset `off` from _stext, as the kernel's
 * orc_find() finds it: the last of those at or below it, within the range
 * the block index gives for its block (its first entry and the next
 * block's, both included).  Its index, or -1 when `off` is beyond the index
 * (the kernel finds none either) or the index is bad.
 */
FG_KORC_INLINE __s64 fg_korc_find(FG_KORC_CTX *ctx, const struct fg_korc_info *t, __u32 off)
{
	__u32 idx = off >> FG_KORC_BLOCK_SHIFT, lo, hi, n;

	if (idx + 1 >= t->nblocks || FG_KORC_BLOCK(ctx, idx, &lo) ||
	    FG_KORC_BLOCK(ctx, idx + 1, &hi))
		return -1;
	if (lo >= t->nr || hi >= t->nr || lo > hi)
		return -1;
	/*
	 * The rightmost entry at or below off in [lo, hi], the kernel's
	 * __orc_find() (lo when there is none, as there): the range halved at
	 * each step, without a branch on the entry (a BPF verifier would
	 * follow both ways of each); 2^23 > FG_KORC_MAX_ENTRIES.
	 */
	n = hi - lo + 1;
	for (int i = 0; i < 23; i++) {
		__u32 half = n >> 1, mask;
		const struct fg_korc_entry *e;

		if (!half)
			break;
		e = FG_KORC_ENTRY(ctx, lo + half);
		if (!e)
			return -1;
		/* all ones when e->ip <= off: the sign of off - ip, less one */
		mask = (__u32)((((__u64)off - e->ip) >> 63) - 1);
		lo += half & mask;
		n -= half;
	}
	return lo;
}

#ifndef FG_KORC_FIND
#define FG_KORC_FIND(ctx, t, off) fg_korc_find((ctx), (t), (off))
#endif

/*
 * The first frame of a tracepoint's stack.  perf hands the BPF program the
 * registers perf_fetch_caller_regs() made up in the function that fired
 * the event (its caller's address, its own frame address in sp, flags 0);
 * the kernel then unwinds from the first frame above that frame address.
 * That function keeps a frame pointer (__builtin_frame_address), so its
 * caller's frame starts 16 bytes above, under the saved bp and the return
 * address `ip`.  Anything else gives up.
 */
FG_KORC_INLINE int fg_korc_start(FG_KORC_CTX *ctx, const struct fg_korc_info *t, __u64 ip, __u64 sp,
				 __u64 flags, struct fg_korc_state *s)
{
	__u64 bp, ret;

	if (flags & FG_EFLAGS_FIXED)
		return FG_KORC_FB_OTHER; /* an interrupt's registers: the kernel starts from them */
	if (ip < t->text_start || ip >= t->text_end)
		return FG_KORC_FB_TEXT;
	if (FG_KORC_READ(ctx, sp, &bp) || FG_KORC_READ(ctx, sp + 8, &ret) || ret != ip)
		return FG_KORC_FB_OTHER;
	s->ip = ip;
	s->sp = sp + 16;
	s->bp = bp;
	s->regs = 0;
	s->prev_regs = 0;
	s->signal = 0;
	s->full_regs = 0;
	return FG_KORC_NEXT;
}

/*
 * The first frame of a stack an interrupt stopped (a clock's sample, a page
 * fault): the registers it saved, at `regs`, whose ip is the first frame;
 * the kernel unwinds from them, the address taken as it is.
 */
FG_KORC_INLINE int fg_korc_start_regs(FG_KORC_CTX *ctx, const struct fg_korc_info *t, __u64 regs,
				      __u64 ip, __u64 sp, __u64 bp, struct fg_korc_state *s)
{
	(void)ctx;
	if (ip < t->text_start || ip >= t->text_end)
		return FG_KORC_FB_TEXT;
	s->ip = ip;
	s->sp = sp;
	s->bp = bp;
	s->regs = regs;
	s->prev_regs = 0;
	s->signal = 1;
	s->full_regs = 1;
	return FG_KORC_NEXT;
}

/* The caller of the frame in *s, into *s: FG_KORC_NEXT, FG_KORC_DONE or a fallback. */
FG_KORC_INLINE int fg_korc_step(FG_KORC_CTX *ctx, const struct fg_korc_info *t,
				struct fg_korc_state *s)
{
	__u64 lip = s->signal ? s->ip : s->ip - 1, prev_sp = s->sp, sp, ip, cs, v;
	const struct fg_korc_entry *e;
	const struct fg_korc_rule *r;
	bool indirect = false;
	__s64 i;

	if (lip < t->text_start || lip >= t->text_end)
		return FG_KORC_FB_TEXT;
	i = FG_KORC_FIND(ctx, t, (__u32)(lip - t->text_start));
	if (i < 0)
		return FG_KORC_FB_OTHER;
	e = FG_KORC_ENTRY(ctx, (__u32)i);
	if (!e)
		return FG_KORC_FB_OTHER;
	r = FG_KORC_RULE(ctx, e->rule);
	if (!r)
		return FG_KORC_FB_OTHER;
	if (r->type == FG_ORC_TYPE_UNDEFINED || r->type == FG_ORC_TYPE_END_OF_STACK)
		return FG_KORC_DONE;
	s->signal = r->signal;
	/* the caller's stack pointer */
	switch (r->sp_reg) {
	case FG_ORC_REG_SP:
		sp = s->sp + (__u64)(__s64)r->sp_offset;
		break;
	case FG_ORC_REG_BP:
		sp = s->bp + (__u64)(__s64)r->sp_offset;
		break;
	case FG_ORC_REG_SP_INDIRECT:
		if (FG_KORC_READ(ctx, s->sp, &sp))
			return FG_KORC_FB_OTHER;
		sp += (__u64)(__s64)r->sp_offset;
		indirect = true;
		break;
	case FG_ORC_REG_BP_INDIRECT:
		if (FG_KORC_READ(ctx, s->bp + (__u64)(__s64)r->sp_offset, &sp))
			return FG_KORC_FB_OTHER;
		indirect = true;
		break;
	case FG_ORC_REG_R10:
	case FG_ORC_REG_R13:
	case FG_ORC_REG_DI:
	case FG_ORC_REG_DX:
		/* only in full registers; without them the kernel stops */
		if (!s->regs || !s->full_regs)
			return FG_KORC_DONE;
		v = r->sp_reg == FG_ORC_REG_R10	  ? FG_PTREGS_R10
		    : r->sp_reg == FG_ORC_REG_R13 ? FG_PTREGS_R13
		    : r->sp_reg == FG_ORC_REG_DI  ? FG_PTREGS_DI
						  : FG_PTREGS_DX;
		if (FG_KORC_READ(ctx, s->regs + v, &sp))
			return FG_KORC_FB_OTHER;
		break;
	default:
		return FG_KORC_DONE; /* the kernel stops on an error */
	}
	/* the caller's address and registers */
	switch (r->type) {
	case FG_ORC_TYPE_CALL:
		if (FG_KORC_READ(ctx, sp - 8, &ip))
			return FG_KORC_FB_OTHER;
		s->sp = sp;
		s->regs = 0;
		s->prev_regs = 0;
		break;
	case FG_ORC_TYPE_REGS:
		if (FG_KORC_READ(ctx, sp + FG_PTREGS_CS, &cs))
			return FG_KORC_FB_OTHER;
		if (cs & 3)
			return FG_KORC_DONE; /* user mode: the kernel keeps no address of it */
		if (FG_KORC_READ(ctx, sp + FG_PTREGS_IP, &ip) ||
		    FG_KORC_READ(ctx, sp + FG_PTREGS_SP, &s->sp))
			return FG_KORC_FB_OTHER;
		s->regs = sp;
		s->prev_regs = 0;
		s->full_regs = 1;
		break;
	case FG_ORC_TYPE_REGS_PARTIAL:
		/* an iret frame: ip, cs, flags, sp, ss */
		if (FG_KORC_READ(ctx, sp + 8, &cs))
			return FG_KORC_FB_OTHER;
		if (cs & 3)
			return FG_KORC_DONE;
		if (FG_KORC_READ(ctx, sp, &ip) || FG_KORC_READ(ctx, sp + 24, &s->sp))
			return FG_KORC_FB_OTHER;
		if (s->full_regs)
			s->prev_regs = s->regs;
		s->regs = sp - FG_PTREGS_IP;
		s->full_regs = 0;
		break;
	default:
		return FG_KORC_DONE;
	}
	/* a tracer's trampoline in place of the address: the kernel looks the real one up */
	if (ip && (ip == t->graph_ret || ip == t->rethook))
		return FG_KORC_FB_OTHER;
	s->ip = ip;
	/* the caller's bp */
	switch (r->bp_reg) {
	case FG_ORC_REG_UNDEFINED:
		if (s->regs && (s->full_regs || s->prev_regs) &&
		    FG_KORC_READ(ctx, (s->full_regs ? s->regs : s->prev_regs) + FG_PTREGS_BP,
				 &s->bp))
			return FG_KORC_FB_OTHER;
		break;
	case FG_ORC_REG_PREV_SP:
		if (FG_KORC_READ(ctx, sp + (__u64)(__s64)r->bp_offset, &s->bp))
			return FG_KORC_FB_OTHER;
		break;
	case FG_ORC_REG_BP:
		if (FG_KORC_READ(ctx, s->bp + (__u64)(__s64)r->bp_offset, &s->bp))
			return FG_KORC_FB_OTHER;
		break;
	default:
		return FG_KORC_DONE;
	}
	/* the stack must climb, unless it moved to another one (the kernel knows which) */
	if (!indirect && r->type == FG_ORC_TYPE_CALL && s->sp <= prev_sp)
		return FG_KORC_FB_OTHER;
	/* the kernel keeps text addresses only: 0 or a user address ends the stack */
	if (s->ip >= t->text_start && s->ip < t->text_end)
		return FG_KORC_NEXT;
	return s->ip < FG_KERNEL_SPACE ? FG_KORC_DONE : FG_KORC_FB_TEXT;
}

#endif
