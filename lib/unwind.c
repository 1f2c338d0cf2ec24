// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdbool.h>
#include <linux/types.h>
#include <string.h>

/*
 * The step function reads the snapshot directly (inlined), rather than
 * through struct fg_cfi_mem's function pointer: two or three reads a frame.
 */
struct snap;
static inline int snap_read(const struct snap *s, __u64 addr, __u64 *val);
#define FG_CFI_CTX const struct snap
#define FG_CFI_READ(ctx, addr, val) snap_read((ctx), (addr), (val))

#include "fg/sample_flags.h"
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
    [FG_UNWIND_END_NOFILE] = "no file",
};

/* The step function's memory: the snapshot, then the caller's reader. */
struct snap {
	const struct fg_unwind_ops *ops;
	uint64_t sp;
	const uint8_t *data;
	size_t size;
	size_t words; /* the offsets from sp of the 8-byte words in it: [0, words) (size - 7) */
};

static inline int snap_read(const struct snap *s, __u64 addr, __u64 *val)
{
	/* below sp, the offset wraps to a large one */
	if (addr - s->sp < s->words) {
		memcpy(val, s->data + (addr - s->sp), 8);
		return 0;
	}
	uint64_t v;

	if (s->ops->read && s->ops->read(s->ops->arg, addr, &v) == 0) {
		*val = v;
		return 0;
	}
	/* nothing copied at all: the stack could not be read, it is not too small */
	return addr >= s->sp && s->size ? FG_CFI_END_TRUNCATED : FG_CFI_END_UNREADABLE;
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

static struct fg_unwind_cached *slot_of(struct fg_unwind_cache *c, uint64_t key, uint64_t addr)
{
	return &c->slot[((addr ^ key) * 0x9e3779b97f4a7c15ull) >> 52 & (FG_UNWIND_CACHE_SLOTS - 1)];
}

/* The rule for vaddr in cfi, through the caller's cache when it has one. */
static const struct fg_cfi_rule *lookup(struct fg_unwind_cache *c, const struct fg_cfi *cfi,
					uint64_t vaddr)
{
	struct fg_unwind_cached *e;

	if (!c)
		return fg_cfi_lookup(cfi, vaddr);
	e = slot_of(c, (uint64_t)(uintptr_t)cfi, vaddr);
	if (e->by != 1 || e->key != (uint64_t)(uintptr_t)cfi || e->addr != vaddr) {
		e->by = 1;
		e->key = (uint64_t)(uintptr_t)cfi;
		e->addr = vaddr;
		e->rule = fg_cfi_lookup(cfi, vaddr);
	}
	return e->rule;
}

/*
 * The code at pc `look` (not 0): 0 with *rule (NULL: frame pointers) and
 * *tag, or find's -errno; after a miss in the cache by space, when the
 * caller gives one (find_rule).
 */
static int find_rule_slow(const struct fg_unwind_ops *ops, uint64_t look, uint32_t arch,
			  const struct fg_cfi_rule **rule, uint64_t *tag)
{
	struct fg_unwind_map m;
	struct fg_unwind_cached *e = NULL;
	int err;

	if (ops->space && ops->cache) {
		/* (the caller probed it: a miss) */
		e = slot_of(ops->cache, *ops->space, look);
	}
	m.tag = 0;
	err = ops->find(ops->arg, look, &m);
	if (err)
		return err;
	/* a file of another machine than the registers' (an x86-64 file in an arm64 snapshot) */
	if (m.cfi && m.cfi->arch != arch)
		return -ENODATA;
	*tag = m.tag;
	if (!e) {
		*rule = m.cfi ? lookup(ops->cache, m.cfi, look - m.bias) : NULL;
		return 0;
	}
	*rule = m.cfi ? fg_cfi_lookup(m.cfi, look - m.bias) : NULL;
	/* find may have read the mappings again: under the space as it is now */
	e = slot_of(ops->cache, *ops->space, look);
	*e = (struct fg_unwind_cached){
	    .key = *ops->space, .addr = look, .rule = *rule, .tag = m.tag, .by = 2};
	return 0;
}

/* The same, through the cache by space when there is one. */
static inline int find_rule(const struct fg_unwind_ops *ops, struct fg_unwind_cache *by_space,
			    uint64_t look, uint32_t arch, const struct fg_cfi_rule **rule,
			    uint64_t *tag)
{
	if (by_space) {
		const struct fg_unwind_cached *e = slot_of(by_space, *ops->space, look);

		if (e->addr == look && e->key == *ops->space && e->by == 2) {
			*rule = e->rule;
			*tag = e->tag;
			return 0;
		}
	}
	return find_rule_slow(ops, look, arch, rule, tag);
}

/*
 * A walk's trail (include/fg/unwind.h): the one it follows, if any, and the
 * one it leaves.
 */
struct trail_walk {
	const struct fg_unwind_trail *follow; /* NULL: none, or left */
	bool left;			      /* it had one and left it */
	bool ended;			      /* past the snapshot, or FG_UNWIND_TRAIL_MAX frames */
	uint32_t n;			      /* offsets in off[] */
	uint16_t off[FG_UNWIND_TRAIL_MAX];
	const struct fg_cfi_rule *rule[FG_UNWIND_TRAIL_MAX]; /* frame i's (NULL: none) */
};

static struct fg_unwind_trail *trail_of(struct fg_unwind_cache *c, uint64_t key, uint64_t pc)
{
	return &c->trail[((pc ^ key) * 0x9e3779b97f4a7c15ull) >> 55 & (FG_UNWIND_TRAIL_SLOTS - 1)];
}

/* The lines of the snapshot from offset `from` to its end, asked for. */
static void ask_rest(const struct snap *s, uint64_t from)
{
	for (uint64_t at = from; at < s->size; at += 64)
		__builtin_prefetch(s->data + at);
	if (s->size)
		__builtin_prefetch(s->data + s->size - 1);
}

/*
 * The lines a step to a CFA at offset `off` reads, asked for: the return
 * address below it, and the registers a prologue saved below that (rbp,
 * rbx).  (Asking for the line 64 bytes below too cost more than it saved.)
 */
static inline void ask_frame(const struct snap *s, uint64_t off)
{
	__builtin_prefetch(s->data + off - 8);
	__builtin_prefetch(s->data + off - 24);
}

/* A step done, to a CFA at sp + off: kept in the trail; the one followed, checked. */
static inline void trail_step(struct trail_walk *w, const struct snap *s, uint64_t off)
{
	uint32_t k = w->n;

	if (w->ended)
		return;
	if (off >= s->size || off > UINT16_MAX || k == FG_UNWIND_TRAIL_MAX) {
		/* no more lines of the snapshot to ask for (or none kept) */
		w->ended = true;
		return;
	}
	w->off[k] = (uint16_t)off;
	w->n = k + 1;
	if (w->follow && (k >= w->follow->n || w->follow->off[k] != off)) {
		/* another way: the rest of the snapshot, from this frame's lines on */
		ask_rest(s, off >= 64 ? off - 64 : 0);
		w->follow = NULL;
		w->left = true;
	}
}

/*
 * A step by this rule reads where the pcs alone say: its CFA is rsp plus a
 * constant (or the PLT's, which depends on rip), its return address at the
 * CFA; the registers it restores are read but never used by such a step.
 */
static inline bool rsp_based(const struct fg_cfi_rule *r)
{
	return r->kind == FG_CFI_NORMAL && r->cfa_reg == FG_CFI_RSP &&
	       (r->cfa == FG_CFI_CFA_REG || r->cfa == FG_CFI_CFA_PLT) && r->ra == FG_CFI_AT_CFA;
}

/*
 * Whether a walk of n frames that ended so can be replayed: each step's
 * rule rsp_based() (the last one's a STOP row, or the step that read past
 * the snapshot), and where each read its return address, into ra[], known.
 */
static bool replayable(const struct trail_walk *w, size_t n, enum fg_unwind_end end, size_t size,
		       uint16_t *ra)
{
	if (!n || n > FG_UNWIND_TRAIL_MAX || w->n + 1 < n ||
	    (end != FG_UNWIND_END_STOP && end != FG_UNWIND_END_TRUNCATED &&
	     end != FG_UNWIND_END_MAXDEPTH))
		return false;
	if (end == FG_UNWIND_END_STOP ? !w->rule[n - 1] || w->rule[n - 1]->kind != FG_CFI_STOP
				      : !w->rule[n - 1] || !rsp_based(w->rule[n - 1]))
		return false;
	for (size_t i = 0; i + 1 < n; i++) {
		int64_t at;

		if (!w->rule[i] || !rsp_based(w->rule[i]))
			return false;
		/* the step to CFA off[i] read the return address at off[i] + ra_off */
		at = (int64_t)w->off[i] + w->rule[i]->ra_off;
		if (at < 0 || (uint64_t)at + 8 > size)
			return false;
		ra[i] = (uint16_t)at;
	}
	return true;
}

/*
 * The trail's frames, when the snapshot's words where its walk read return
 * addresses are those return addresses (the trail replayable, its size and
 * max the walk's): the walk would go the same way.
 */
static bool replay(const struct fg_unwind_trail *t, const struct snap *s,
		   struct fg_unwind_frame *frames, enum fg_unwind_end *end)
{
	for (uint32_t k = 0; k + 1 < t->nframes; k++) {
		uint64_t v;

		memcpy(&v, s->data + t->ra[k], sizeof(v));
		if (v != t->frames[k + 1].pc)
			return false;
	}
	memcpy(frames, t->frames, t->nframes * sizeof(*frames));
	*end = (enum fg_unwind_end)t->end;
	return true;
}

/* the rule of arm64 code without CFI, at an exact pc */
static const struct fg_cfi_rule arm64_in_lr = {
    .kind = FG_CFI_NORMAL, .cfa = FG_CFI_CFA_REG, .cfa_reg = FG_CFI_A64_SP, .ra = FG_CFI_SAME};

/*
 * A step that left the stack pointer where it was: an arm64 leaf (or a
 * prologue before it allocates), whose return address is still in x30 and
 * whose CFA is sp itself.  Once a walk; a second would go round in circles.
 */
static inline bool leaf_step(const struct fg_cfi_rule *rule, bool *same_sp)
{
	if (*same_sp || !rule || rule->kind != FG_CFI_NORMAL || rule->ra != FG_CFI_SAME)
		return false;
	*same_sp = true;
	return true;
}

static size_t walk(const struct fg_unwind_ops *ops, struct fg_cfi_regs g, const struct snap *sp_,
		   struct trail_walk *w, struct fg_unwind_frame *frames, size_t max,
		   enum fg_unwind_end *end)
{
	const struct snap s = *sp_;
	struct fg_unwind_cache *by_space = ops->space ? ops->cache : NULL;
	uint32_t flags = FG_UNWIND_F_EXACT;
	bool same_sp = false;
	size_t n = 0;

	for (;;) {
		uint64_t pc = g.r[FG_CFI_RIP], look, rsp = g.r[FG_CFI_RSP];
		const struct fg_cfi_rule *rule = NULL;
		uint64_t tag = 0;
		int res, err;

		if (n == max) {
			*end = FG_UNWIND_END_MAXDEPTH;
			return n;
		}
		look = (flags & FG_UNWIND_F_EXACT) || !pc ? pc : pc - 1;
		err = pc ? find_rule(ops, by_space, look, g.arch, &rule, &tag) : -ENOENT;
		if (err == -ENOENT && n && !pc) {
			/* a return address of zero: no frame there */
			*end = FG_UNWIND_END_NOMAP;
			return n;
		}
		frames[n++] = (struct fg_unwind_frame){.pc = pc, .flags = flags, .tag = tag};
		if (w && n <= FG_UNWIND_TRAIL_MAX)
			w->rule[n - 1] = rule;
		if (err) {
			*end = err == -ENOENT	 ? FG_UNWIND_END_NOMAP
			       : err == -ENODATA ? FG_UNWIND_END_NOINFO
						 : FG_UNWIND_END_NOFILE;
			return n;
		}
		if (rule && rule->kind != FG_CFI_NONE) {
			res = fg_cfi_step(rule, &g, &s);
			flags = 0;
		} else if (g.arch == FG_CFI_ARCH_ARM64 && (flags & FG_UNWIND_F_EXACT) &&
			   (g.valid & FG_CFI_BIT(FG_CFI_A64_LR))) {
			/* arm64 code without CFI at an exact pc (a PLT stub, a leaf in assembly):
			 * its return address is still in x30, its frame not made yet */
			res = fg_cfi_step(&arm64_in_lr, &g, &s);
			rule = &arm64_in_lr;
			flags = 0;
		} else if ((g.valid & FG_CFI_BIT(FG_CFI_RBP)) && !g.r[FG_CFI_RBP]) {
			/* a frame pointer of zero: the outermost frame, or not known */
			*end = fg_cfi_rbp0_outermost(rule != NULL, !!(flags & FG_UNWIND_F_EXACT))
				   ? FG_UNWIND_END_STOP
				   : FG_UNWIND_END_NOINFO;
			return n;
		} else if (rule && !(g.valid & FG_CFI_BIT(FG_CFI_RBP))) {
			*end = FG_UNWIND_END_NOINFO;
			return n;
		} else {
			/*
			 * No CFI for this code (JIT code), or none for this pc in a
			 * file that has some (crti's _init and _fini, hand-written
			 * assembly): its frame pointer, as libdwfl and libunwind do
			 */
			res = fg_cfi_step_fp(&g, &s);
			flags = FG_UNWIND_F_FP;
		}
		if (w && (res == FG_CFI_OK || res == FG_CFI_OK_EXACT))
			trail_step(w, &s, g.r[FG_CFI_RSP] - s.sp);
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
		} else if (g.r[FG_CFI_RSP] < rsp ||
			   (g.r[FG_CFI_RSP] == rsp && !leaf_step(rule, &same_sp))) {
			*end = FG_UNWIND_END_LOOP;
			return n;
		}
	}
}

size_t fg_unwind(const struct fg_unwind_ops *ops, const struct fg_cfi_regs *regs, uint64_t sp,
		 const void *stack, size_t size, struct fg_unwind_frame *frames, size_t max,
		 enum fg_unwind_end *end)
{
	struct snap s = {ops, sp, stack, size, size >= 8 ? size - 7 : 0};
	struct fg_unwind_cache *c = ops->space ? ops->cache : NULL;
	struct fg_unwind_trail *t;
	struct trail_walk w;
	uint64_t key, pc;
	size_t n;

	*end = FG_UNWIND_END_NOREG;
	if (!(regs->valid & FG_CFI_BIT(FG_CFI_RIP)) || !(regs->valid & FG_CFI_BIT(FG_CFI_RSP)))
		return 0;
	if (!c) {
		ask_rest(&s, 0);
		return walk(ops, *regs, &s, NULL, frames, max, end);
	}
	key = *ops->space;
	pc = regs->r[FG_CFI_RIP];
	t = trail_of(c, key, pc);
	w.n = 0;
	w.left = w.ended = false;
	w.follow = NULL;
	if (t->n && t->key == key && t->pc == pc) {
		w.follow = t;
		if (t->nframes) {
			/* what a replay reads: the return addresses alone */
			for (uint32_t i = 0; i + 1 < t->nframes; i++)
				__builtin_prefetch(s.data + t->ra[i]);
		} else {
			for (uint32_t i = 0; i < t->n; i++)
				ask_frame(&s, t->off[i]);
		}
		/* (with a reader of memory beyond the snapshot, not the snapshot's alone) */
		if (t->nframes && t->size == size && t->max == max &&
		    t->rsp_off == regs->r[FG_CFI_RSP] - sp && !ops->read &&
		    replay(t, &s, frames, end)) {
			c->trail_kept++;
			c->replayed++;
			return t->nframes;
		}
	} else {
		ask_rest(&s, 0);
	}
	n = walk(ops, *regs, &s, &w, frames, max, end);
	if (w.follow)
		c->trail_kept++;
	else if (w.left)
		c->trail_left++;
	else
		c->trail_none++;
	t->key = key;
	t->pc = pc;
	t->n = w.n;
	memcpy(t->off, w.off, w.n * sizeof(*w.off));
	t->nframes = 0;
	if (!ops->read && *ops->space == key && replayable(&w, n, *end, size, t->ra)) {
		t->nframes = (uint32_t)n;
		t->size = size;
		t->max = max;
		t->rsp_off = regs->r[FG_CFI_RSP] - sp;
		t->end = *end;
		memcpy(t->frames, frames, n * sizeof(*frames));
	}
	return n;
}

/*
 * x86-64 perf_regs numbers (arch/x86/include/uapi/asm/perf_regs.h) as DWARF
 * numbers; FG_CFI_NREGS: none (a slot that is thrown away)
 */
#define NONE FG_CFI_NREGS
static const unsigned char perf_to_dwarf[64] = {
    0,	  3,	2,    1,    4,	  5,	6,    7,    16,	  NONE, NONE, NONE, NONE, NONE, NONE, NONE,
    8,	  9,	10,   11,   12,	  13,	14,   15,   NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE,
    NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE,
    NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE,
};
#undef NONE

/* arm64's perf_regs (x0-x30, sp, pc: 0-32): those the slots hold, x29, x30, sp and pc */
static int regs_from_arm64(uint64_t mask, const uint64_t *regs, uint32_t nregs,
			   struct fg_cfi_regs *out)
{
	static const struct {
		unsigned perf, slot;
	} keep[] = {{FG_REG_ARM64_X29, FG_CFI_A64_FP},
		    {FG_REG_ARM64_LR, FG_CFI_A64_LR},
		    {FG_REG_ARM64_SP, FG_CFI_A64_SP},
		    {FG_REG_ARM64_PC, FG_CFI_A64_PC}};

	out->arch = FG_CFI_ARCH_ARM64;
	if ((uint32_t)__builtin_popcountll(mask) != nregs || mask >> FG_REG_ARM64_MAX)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		uint64_t bit = 1ull << keep[i].perf;

		if (!(mask & bit))
			continue;
		/* its index in regs[]: the bits of the mask below it */
		out->r[keep[i].slot] = regs[__builtin_popcountll(mask & (bit - 1))];
		out->valid |= FG_CFI_BIT(keep[i].slot);
	}
	if (!(out->valid & FG_CFI_BIT(FG_CFI_A64_PC)) || !(out->valid & FG_CFI_BIT(FG_CFI_A64_SP)))
		return -EINVAL;
	return 0;
}

int fg_unwind_regs_from_perf(uint32_t abi, uint64_t mask, const uint64_t *regs, uint32_t nregs,
			     struct fg_cfi_regs *out)
{
	uint64_t r[FG_CFI_NREGS + 1] = {0}, left = mask;
	uint32_t k = 0, valid = 0;

	if (abi == FG_USTACK_ABI_X86_64 && mask == FG_USTACK_REGS_X86_64 &&
	    nregs == FG_USTACK_NR_REGS) {
		/* fg-sample's: ax bx cx dx si di bp sp ip, flags cs ss, r8-r15 */
		for (int i = 0; i < 9; i++)
			out->r[perf_to_dwarf[i]] = regs[i];
		memcpy(&out->r[8], &regs[12], 8 * sizeof(*regs));
		out->valid = (1u << FG_CFI_NREGS) - 1;
		out->arch = FG_CFI_ARCH_X86_64;
		return 0;
	}
	memset(out, 0, sizeof(*out));
	if (abi == FG_USTACK_ABI_ARM64)
		return regs_from_arm64(mask, regs, nregs, out);
	if (abi != FG_USTACK_ABI_X86_64)
		return -EINVAL;
	/* one register a bit of the mask, in bit order */
	for (; left && k < nregs; left &= left - 1, k++) {
		unsigned d = perf_to_dwarf[__builtin_ctzll(left)];

		r[d] = regs[k];
		valid |= 1u << d;
	}
	if (left || k != nregs)
		return -EINVAL;
	memcpy(out->r, r, sizeof(out->r));
	out->valid = valid & ((1u << FG_CFI_NREGS) - 1);
	if (!(out->valid & FG_CFI_BIT(FG_CFI_RIP)) || !(out->valid & FG_CFI_BIT(FG_CFI_RSP)))
		return -EINVAL;
	return 0;
}
